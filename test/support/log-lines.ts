/**
 * Lines for the request log's buffer tests (test/e2e/log-lines.test.ts), by a fixed recipe: ASCII, 2-,
 * 3- and 4-byte UTF-8 characters, U+2028 and quotes, mostly under 300 characters, every `longEvery`th
 * one up to twice `capacity` characters (longer than the buffer's bytes).
 */
export function linesFor(n: number, capacity: number, longEvery: number): string[] {
  const pieces = ["a", "é", "€", "𝄞", "\u2028", '"', "日本語", "x".repeat(37)];
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const len = (i * 7919) % (i % longEvery === 0 ? capacity * 2 : 300);
    const parts: string[] = [`{"n":${i},"t":"`];
    let size = parts[0]!.length;
    for (let k = i; size < len; k++) {
      const p = pieces[k % pieces.length]!;
      parts.push(p);
      size += p.length;
    }
    out.push(parts.join("") + '"}');
  }
  return out;
}
