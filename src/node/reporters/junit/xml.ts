/** Escapes text for XML attributes and content; drops characters XML 1.0 cannot carry. */
export function escapeXml(value: string): string {
  return value
    .replace(/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** An element with escaped attributes; `children` are already-rendered XML (or none: a self-closing tag). */
export function element(name: string, attributes: Record<string, string | number | undefined>, children?: string): string {
  const attrs = Object.entries(attributes)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => ` ${key}="${escapeXml(String(value))}"`)
    .join('');
  return children === undefined ? `<${name}${attrs}/>` : `<${name}${attrs}>${children}</${name}>`;
}

export function properties(entries: Array<[string, string | number]>): string {
  return entries.length ? element('properties', {}, entries.map(([name, value]) => element('property', { name, value })).join('')) : '';
}
