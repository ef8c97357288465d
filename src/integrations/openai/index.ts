/** The recording OpenAI client (also exported from the package's main entry). */
export { RecordingOpenAI, createRecordingClient, type RecordingClientOptions } from './recording-client.ts';
