/**
 * Reads `GET /admin/api/events` (SPEC 9.4) the way a browser's EventSource would: the SSE stream is
 * parsed with eventsource-parser and each event is kept in arrival order, its `data` JSON-decoded.
 */
import { createParser } from "eventsource-parser";

/** One received event: the SSE event name, id and decoded data. */
export interface ReceivedEvent {
  event: string;
  id?: string;
  data: any;
}

/** An open event stream. */
export interface EventStreamReader {
  events: ReceivedEvent[];
  /** Resolves with the first event (already received or yet to come) matching `pred`; rejects after `timeoutMs`. */
  waitFor(pred: (e: ReceivedEvent) => boolean, timeoutMs?: number): Promise<ReceivedEvent>;
  /** Whether the server ended the stream. */
  ended: () => boolean;
  close(): void;
}

/** Opens the event stream of a gateway at `url` (base URL), with optional query and headers. */
export async function openEvents(url: string, query = "", headers: Record<string, string> = {}): Promise<EventStreamReader> {
  const controller = new AbortController();
  const res = await fetch(`${url}/admin/api/events${query}`, { headers, signal: controller.signal });
  if (res.status !== 200) throw new Error(`events: HTTP ${res.status}: ${await res.text()}`);
  const events: ReceivedEvent[] = [];
  const waiters: Array<{ pred: (e: ReceivedEvent) => boolean; resolve: (e: ReceivedEvent) => void }> = [];
  let done = false;
  const parser = createParser({
    onEvent(m) {
      const e: ReceivedEvent = { event: m.event ?? "message", id: m.id, data: JSON.parse(m.data) };
      events.push(e);
      for (const w of [...waiters]) {
        if (w.pred(e)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(e);
        }
      }
    },
  });
  void (async () => {
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    try {
      for (;;) {
        const { done: d, value } = await reader.read();
        if (d) break;
        parser.feed(dec.decode(value, { stream: true }));
      }
    } catch {
      // aborted by close()
    }
    done = true;
  })();
  return {
    events,
    ended: () => done,
    waitFor(pred, timeoutMs = 8000) {
      const found = events.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const w = { pred, resolve: (e: ReceivedEvent) => (clearTimeout(t), resolve(e)) };
        const t = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`no matching event within ${timeoutMs} ms; received: ${JSON.stringify(events.map((e) => [e.event, e.data?.change ?? e.data?.outcome]))}`));
        }, timeoutMs);
        waiters.push(w);
      });
    },
    close: () => controller.abort(),
  };
}
