/**
 * Between a whole reply and a stream of hub events, both ways (SPEC F-9): a non-streaming client
 * served from a streaming provider accumulates the canonical events into a {@link HubResponse}; a
 * streaming client served from a non-streaming provider gets the response replayed as events.
 */
import {
  mergeUsage,
  type HubError,
  type HubEvent,
  type HubPart,
  type HubResponse,
  type ThinkingPart,
  type ToolCallPart,
  type TextPart,
} from "./hub.ts";

/** The outcome of accumulating a stream: the reply, or the error that ended it. */
export interface Accumulated {
  response: HubResponse;
  /** Set when the stream ended with an `error` event (including a truncated stream). */
  error?: HubError;
}

/**
 * Folds CANONICAL hub events (see {@link HubEvent}) into a reply. Feed with {@link Accumulator.event};
 * read {@link Accumulator.result} after the last event.
 */
export class Accumulator {
  private readonly response: HubResponse = { content: [], stopReason: null, usage: {} };
  private current: HubPart | null = null;
  private error: HubError | undefined;

  event(ev: HubEvent): void {
    const r = this.response;
    switch (ev.type) {
      case "message_start":
        if (ev.id) r.id = ev.id;
        if (ev.model) r.model = ev.model;
        mergeUsage(r.usage, ev.usage);
        return;
      case "usage":
        mergeUsage(r.usage, ev.usage);
        return;
      case "finish":
        r.stopReason = ev.reason;
        if (ev.stopSequence !== undefined) r.stopSequence = ev.stopSequence;
        if (ev.raw !== undefined) r.rawStopReason = ev.raw;
        if (ev.explanation !== undefined) r.stopExplanation = ev.explanation;
        return;
      case "error":
        this.error = ev.error;
        return;
      case "block_start": {
        const b = ev.block;
        let part: HubPart;
        switch (b.type) {
          case "text":
            part = { type: "text", text: "" } as TextPart;
            if (b.signature) part.signature = b.signature;
            if (b.phase) part.phase = b.phase;
            if (b.refusal) part.refusal = true;
            break;
          case "thinking":
            part = { type: "thinking", text: "" } as ThinkingPart;
            if (b.itemId) part.itemId = b.itemId;
            if (b.raw) part.raw = true;
            break;
          case "redacted_thinking":
            part = { type: "redacted_thinking", data: b.data };
            break;
          case "tool_call":
            part = { type: "tool_call", id: b.id, name: b.name, arguments: "" } as ToolCallPart;
            if (b.itemId) part.itemId = b.itemId;
            if (b.signature) part.signature = b.signature;
            if (b.namespace) part.namespace = b.namespace;
            break;
        }
        r.content.push(part);
        this.current = part;
        return;
      }
      case "block_delta": {
        const p = this.current;
        if (!p) return;
        const d = ev.delta;
        if (d.type === "text" && p.type === "text") {
          p.text += d.text;
          if (d.logprobs !== undefined) {
            if (p.logprobs) for (const lp of d.logprobs) p.logprobs.push(lp);
            else p.logprobs = d.logprobs.slice();
          }
        } else if (d.type === "thinking" && p.type === "thinking") {
          p.text += d.text;
          if (p.summary) p.summary[p.summary.length - 1] += d.text;
        } else if (d.type === "thinking_part" && p.type === "thinking") {
          (p.summary ??= []).push("");
        } else if (d.type === "signature") {
          if (p.type === "thinking" || p.type === "text" || p.type === "tool_call") p.signature = d.signature;
        } else if (d.type === "tool_args" && p.type === "tool_call") p.arguments += d.json;
        return;
      }
      case "block_stop":
        this.current = null;
        return;
    }
  }

  get result(): Accumulated {
    return this.error ? { response: this.response, error: this.error } : { response: this.response };
  }
}

/** Accumulates a whole list of canonical events. */
export function accumulate(events: Iterable<HubEvent>): Accumulated {
  const a = new Accumulator();
  for (const e of events) a.event(e);
  return a.result;
}

/**
 * Replays a complete reply as canonical events: `message_start` (id, model, usage), one block per
 * content part with its whole content as one delta, `finish`, and the final usage. A reply without a
 * stop reason yields no finish (the encoder then reports it as cut off).
 */
export function responseToEvents(resp: HubResponse): HubEvent[] {
  const out: HubEvent[] = [{ type: "message_start", id: resp.id, model: resp.model, usage: { ...resp.usage } }];
  let index = 0;
  for (const part of resp.content) {
    switch (part.type) {
      case "text":
        if (part.text.length === 0 && !part.signature) continue;
        out.push({ type: "block_start", index, block: part.refusal ? { type: "text", signature: part.signature, phase: part.phase, refusal: true } : { type: "text", signature: part.signature, phase: part.phase } });
        if (part.text.length > 0) out.push({ type: "block_delta", index, delta: part.logprobs ? { type: "text", text: part.text, logprobs: part.logprobs } : { type: "text", text: part.text } });
        break;
      case "thinking":
        out.push({ type: "block_start", index, block: { type: "thinking", itemId: part.itemId, raw: part.raw } });
        if (part.summary && part.summary.length > 0) {
          for (const s of part.summary) {
            out.push({ type: "block_delta", index, delta: { type: "thinking_part" } });
            if (s.length > 0) out.push({ type: "block_delta", index, delta: { type: "thinking", text: s } });
          }
        } else if (part.text.length > 0) {
          out.push({ type: "block_delta", index, delta: { type: "thinking", text: part.text } });
        }
        if (part.signature) out.push({ type: "block_delta", index, delta: { type: "signature", signature: part.signature } });
        break;
      case "redacted_thinking":
        out.push({ type: "block_start", index, block: { type: "redacted_thinking", data: part.data } });
        break;
      case "tool_call":
        out.push({
          type: "block_start",
          index,
          block: {
            type: "tool_call",
            id: part.id,
            name: part.name,
            itemId: part.itemId,
            signature: part.signature,
            namespace: part.namespace,
          },
        });
        if (part.arguments.length > 0) out.push({ type: "block_delta", index, delta: { type: "tool_args", json: part.arguments } });
        break;
      default:
        continue; // inputs (images, tool results) never appear in a reply
    }
    out.push({ type: "block_stop", index });
    index++;
  }
  if (resp.stopReason) {
    const finish: HubEvent = { type: "finish", reason: resp.stopReason, stopSequence: resp.stopSequence, raw: resp.rawStopReason };
    if (resp.stopExplanation !== undefined) finish.explanation = resp.stopExplanation;
    out.push(finish);
    out.push({ type: "usage", usage: { ...resp.usage } });
  }
  return out;
}
