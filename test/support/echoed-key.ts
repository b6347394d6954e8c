/**
 * An account key that a fake upstream echoes back (in an error body, an in-band error event), for the
 * tests that a secret never reaches the client or the records (SPEC 2.4, O-2, O-6): the key, how a
 * piece of it is searched for, and the Anthropic stream that breaks off with an error event after some
 * text.
 */

/**
 * The account key: 33 characters of no known credential shape (no `sk-` prefix), so only the exact
 * match of the instance's own secret catches it, and a part of it is no longer that secret.
 */
export const ACCOUNT_KEY = "o5plainsecretkeyvalue000000000000";

/** How many characters of {@link ACCOUNT_KEY} in a row make a leak. */
export const PIECE = 8;

/** Every piece of {@link PIECE} characters of the account key that `text` contains (none: no leak). */
export function piecesIn(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + PIECE <= ACCOUNT_KEY.length; i++) if (text.includes(ACCOUNT_KEY.slice(i, i + PIECE))) out.push(ACCOUNT_KEY.slice(i, i + PIECE));
  return out;
}

/**
 * An Anthropic Messages stream (SSE text) that starts a message and a text block, sends `texts` as text
 * deltas, and breaks off with `event: error` whose data is `errorData` as it is (JSON, or the plain text
 * of a proxy's error).
 */
export function anthropicBrokenOff(texts: string[], errorData: string): string {
  const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
  return (
    sse("message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 0 } } }) +
    sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }) +
    texts.map((text) => sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })).join("") +
    `event: error\ndata: ${errorData}\n\n`
  );
}
