/**
 * A passthrough tap's framing, checked the same way for every SSE format: `bytes` (a recorded stream
 * with CRLF line ends) fed one byte per read must come out byte for byte, each event forwarded exactly
 * when its blank line is whole, nothing added at the end, and the stream seen as terminal.
 */
import { expect } from "bun:test";
import type { PassthroughTap } from "../../formats/codec.ts";

const text = (b: Uint8Array) => new TextDecoder().decode(b);

/** Feeds `crlf` to `tap` one byte per read and asserts the framing described in the module doc. */
export function expectCrlfOneBytePerRead(tap: PassthroughTap, crlf: Uint8Array): void {
  const outs: string[] = [];
  for (let i = 0; i < crlf.length; i++) {
    const out = tap.push(crlf.subarray(i, i + 1));
    if (out.length > 0) {
      outs.push(text(out));
      expect(text(crlf.subarray(0, i + 1)).endsWith("\r\n\r\n")).toBe(true);
    }
  }
  expect(outs.join("")).toBe(text(crlf));
  expect(tap.end().length).toBe(0);
  expect(tap.state.terminal).toBe(true);
}
