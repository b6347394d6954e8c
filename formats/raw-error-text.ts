/**
 * The text of an upstream error body that is not the format's error shape, as the message a client is
 * given. No I/O.
 */

/**
 * `body` trimmed and cut to `max` characters; undefined for an empty body or an HTML page (a proxy's
 * 502, a server's 500), whatever its content-type says: markup says nothing a client can use, and a
 * page labelled text/plain reached Gemini clients as their error message (`<html>boom</html>`).
 */
export function rawErrorText(body: string, max: number): string | undefined {
  const text = body.trim();
  if (text.length === 0 || /^<(?:!doctype|html|head|body)\b/i.test(text)) return undefined;
  return text.slice(0, max);
}
