/** C0 and C1 control characters and DEL: a terminal acts on them (ESC starts a sequence, CR rewrites the line). */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** Untrusted text (from Redis, an agent) for a log line: each control character shown as its `\uXXXX` escape. */
export const showControls = (text: string): string => text.replace(CONTROLS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
