/**
 * The output items of a Responses stream as its events build them (REFERENCE §3.3), for the native tap
 * to complete a third-party server's terminal event that carries no `output` (tap.ts module doc): an
 * item from its `output_item.added`, its content parts, text, refusal, reasoning summary and call
 * arguments from their `.added` / `.delta` / `.done` events, the whole item from its
 * `output_item.done`. What openai 7.x's `ResponseStream` accumulates for such a terminal (its items
 * by output index: the completed ones for `response.completed`, the unfinished ones too for
 * `response.incomplete` / `.failed`). Events it does not know are skipped. Pure, no I/O.
 */

type Json = Record<string, any>;

/** The items of one stream, by `output_index`, with whether each is done. */
export class ItemSnapshot {
  private readonly items = new Map<number, { item: Json; done: boolean }>();

  /** Reads one event (its parsed data; `type` its name). Never throws. */
  read(type: string, ev: Json): void {
    const at = ev.output_index;
    if (typeof at !== "number") return;
    if (type === "response.output_item.added" || type === "response.output_item.done") {
      if (ev.item && typeof ev.item === "object") this.items.set(at, { item: structuredClone(ev.item), done: type === "response.output_item.done" });
      return;
    }
    const slot = this.items.get(at);
    if (!slot || slot.done) return;
    const item = slot.item;
    const ci = ev.content_index;
    const si = ev.summary_index;
    switch (type) {
      case "response.content_part.added":
      case "response.content_part.done":
        if (typeof ci === "number" && ev.part && typeof ev.part === "object") (Array.isArray(item.content) ? item.content : (item.content = []))[ci] = structuredClone(ev.part);
        return;
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const part = typeof ci === "number" && Array.isArray(item.content) ? item.content[ci] : undefined;
        const key = type === "response.output_text.delta" ? "text" : "refusal";
        if (part && typeof part === "object" && typeof ev.delta === "string") part[key] = (typeof part[key] === "string" ? part[key] : "") + ev.delta;
        return;
      }
      case "response.function_call_arguments.delta":
        if (typeof ev.delta === "string") item.arguments = (typeof item.arguments === "string" ? item.arguments : "") + ev.delta;
        return;
      case "response.function_call_arguments.done":
        if (typeof ev.arguments === "string") item.arguments = ev.arguments;
        return;
      case "response.reasoning_summary_part.added":
        if (typeof si === "number" && ev.part && typeof ev.part === "object") (Array.isArray(item.summary) ? item.summary : (item.summary = []))[si] = structuredClone(ev.part);
        return;
      case "response.reasoning_summary_text.delta": {
        const part = typeof si === "number" && Array.isArray(item.summary) ? item.summary[si] : undefined;
        if (part && typeof part === "object" && typeof ev.delta === "string") part.text = (typeof part.text === "string" ? part.text : "") + ev.delta;
        return;
      }
    }
  }

  /** The items by output index: only the done ones, or (`unfinished`) those still open too, as they stand. */
  output(unfinished: boolean): Json[] {
    return [...this.items.entries()]
      .filter(([, s]) => unfinished || s.done)
      .sort(([a], [b]) => a - b)
      .map(([, s]) => structuredClone(s.item));
  }
}
