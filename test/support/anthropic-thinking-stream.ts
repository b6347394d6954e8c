/**
 * The pieces of a streamed Anthropic Messages reply with extended thinking (REFERENCE §1.3), as the
 * e2e tests of the first-content bound and of pings after the commit point script them on the fake
 * upstream: the message's start, a thinking block's start and its deltas, and the answer after the
 * thinking (its signature, the block's stop, one text block, the stop reason, the message's stop).
 */

/** One SSE event: `event: NAME` and its JSON data, with the blank line that ends it. */
export const sseEvent = (name: string, data: unknown): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** `message_start` of a reply from model `claude-x` (5 input tokens). */
export const MESSAGE_START = sseEvent("message_start", {
  type: "message_start",
  message: { id: "msg_p", type: "message", role: "assistant", model: "claude-x", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } },
});

/** The start of a thinking block at index 0 (where a passthrough commits). */
export const THINKING_START = sseEvent("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } });

/** One thinking delta of block 0 carrying `text`. */
export const thinkingDelta = (text: string): string => sseEvent("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: text } });

/** Everything after the thinking deltas: the signature, block 0's stop, the answer "thought it through", end_turn (12 output tokens), message_stop. */
export const THINKING_ANSWER =
  sseEvent("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "c2lnbmF0dXJl" } }) +
  sseEvent("content_block_stop", { type: "content_block_stop", index: 0 }) +
  sseEvent("content_block_start", { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } }) +
  sseEvent("content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "thought it through" } }) +
  sseEvent("content_block_stop", { type: "content_block_stop", index: 1 }) +
  sseEvent("message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 12 } }) +
  sseEvent("message_stop", { type: "message_stop" });
