/**
 * A toy tokenizer: deterministic, reversible pieces (a word or a punctuation mark with its leading whitespace),
 * ids hashed from the piece. It only has to be stable, so that token ids and logprobs can be tested offline.
 */
const PIECE = /\s*(?:\w+|[^\w\s])|\s+$/g;
const VOCABULARY = 50_000;

/** Splits text into pieces that join back to the text. */
export function splitPieces(text: string): string[] {
  return text.match(PIECE) ?? [];
}

/** FNV-1a over the piece's UTF-16 units. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export function tokenId(piece: string): number {
  return hash(piece) % VOCABULARY;
}

/** Token ids of a chat prompt, with a role marker before each message (a stand-in for a chat template). */
export function promptTokenIds(messages: Array<{ role: string; content?: unknown }>): number[] {
  return messages.flatMap((m) => [tokenId(`<|${m.role}|>`), ...splitPieces(textOf(m.content)).map(tokenId)]);
}

/** The text of a message's content: a string, or the text parts of a content array. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
}

/** An OpenAI `logprobs.content` entry for one piece, with `top` alternatives (the piece itself first). */
export function logprobOf(piece: string, top: number) {
  const logprob = -(hash(`lp${piece}`) % 1000) / 1000;
  const entry = (token: string, value: number) => ({ token, logprob: value, bytes: [...Buffer.from(token)] });
  const alternatives = Array.from({ length: top }, (_, i) => entry(i === 0 ? piece : `${piece}~${i}`, logprob - i));
  return { ...entry(piece, logprob), top_logprobs: alternatives };
}
