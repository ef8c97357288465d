/** Identifies a suite within a run: its file and its name (a file that failed to load: its path as the name). */
export const suiteKey = (file: string, name: string) => `${file}\0${name}`;
