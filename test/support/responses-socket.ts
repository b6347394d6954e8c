/**
 * A raw client of Codex's Responses WebSocket (SPEC 2.5) for tests: `ws://…/v1/responses`, every
 * frame kept (parsed and as text), `next()` / `untilTerminal()` to wait for frames.
 */
/** A raw client socket with a queue of received frames. */
export interface Client {
  ws: WebSocket;
  frames: any[];
  /** The frames' text exactly as received. */
  raw: string[];
  /** Waits for the next frame (parsed JSON). */
  next(timeoutMs?: number): Promise<any>;
  /** Frames up to and including the first terminal event or error frame. */
  untilTerminal(): Promise<any[]>;
  send(frame: unknown): void;
  closed: Promise<{ code: number; reason: string }>;
}

export const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);
/** The end of one request's frames: a terminal event, or the gateway's error frame (it carries `status`). */
export const isLast = (f: any) => TERMINAL.has(f.type) || (f.type === "error" && f.status !== undefined);

export async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const ws = new WebSocket(url.replace(/^http/, "ws") + "/v1/responses", { headers } as any);
  const frames: any[] = [];
  const raw: string[] = [];
  let waiting: ((f: any) => void) | undefined;
  const pending: any[] = [];
  ws.onmessage = (e) => {
    raw.push(String(e.data));
    const f = JSON.parse(String(e.data));
    frames.push(f);
    if (waiting) {
      const w = waiting;
      waiting = undefined;
      w(f);
    } else pending.push(f);
  };
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (ws.onclose = (e) => resolve({ code: e.code, reason: e.reason })));
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error("socket error"));
  });
  const next = (timeoutMs = 5000) =>
    new Promise<any>((resolve, reject) => {
      if (pending.length > 0) return resolve(pending.shift());
      const t = setTimeout(() => reject(new Error("no frame")), timeoutMs);
      waiting = (f) => {
        clearTimeout(t);
        resolve(f);
      };
    });
  return {
    ws,
    frames,
    raw,
    next,
    async untilTerminal() {
      const out: any[] = [];
      for (;;) {
        const f = await next();
        out.push(f);
        if (isLast(f)) return out;
      }
    },
    send: (frame) => ws.send(JSON.stringify(frame)),
    closed,
  };
}
