import { shorten } from '../format.ts';
import { escapeControlsAndBreaks } from '../printable.ts';

/** Characters of a name kept in a table cell; the rest is cut, and the summary says so. */
export const MAX_CELL_CHARS = 500;

/**
 * Untrusted text (a suite name) as one Markdown table cell: line breaks and controls shown as `\u000a`, and
 * backslashes, pipes and `<` escaped, so that it can neither end its row nor open HTML. Long text is cut to
 * `MAX_CELL_CHARS` and ends with `…`.
 */
export function markdownCell(text: string): string {
  return escapeControlsAndBreaks(shorten(text, MAX_CELL_CHARS)).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;');
}
