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
  /**
   * Waits for the next frame (parsed JSON); rejects when the socket closes first (naming its code and
   * reason), or with "no frame" after `timeoutMs` when one is given. Without one the test's own timeout
   * bounds the wait: how long a frame takes is the machine's load (a 17 MiB request is ~1 s of CPU
   * before its first event), not something a test asserts.
   */
  next(timeoutMs?: number): Promise<any>;
  /** Frames up to and including the first terminal event or error frame. */
  untilTerminal(): Promise<any[]>;
  send(frame: unknown): void;
  closed: Promise<{ code: number; reason: string }>;
}

export const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);
/** The end of one request's frames: a terminal event, or the gateway's error frame (it carries `status`). */
export const isLast = (f: any) => TERMINAL.has(f.type) || (f.type === "error" && f.status !== undefined);

/** Opens the socket at `url` + `path` (`/v1/responses`; `/v1//responses` is a base URL ending in "/"), with `headers` on the upgrade. */
export async function connect(url: string, headers: Record<string, string> = {}, path = "/v1/responses"): Promise<Client> {
  const ws = new WebSocket(url.replace(/^http/, "ws") + path, { headers } as any);
  const frames: any[] = [];
  const raw: string[] = [];
  let waiting: ((f: any) => void) | undefined;
  let failWaiting: ((e: Error) => void) | undefined;
  let closedAs: { code: number; reason: string } | undefined;
  const closedError = () => new Error(`the socket closed (${closedAs!.code} ${closedAs!.reason}) before the next frame`);
  const pending: any[] = [];
  ws.onmessage = (e) => {
    raw.push(String(e.data));
    const f = JSON.parse(String(e.data));
    frames.push(f);
    if (waiting) {
      const w = waiting;
      waiting = failWaiting = undefined;
      w(f);
    } else pending.push(f);
  };
  const closed = new Promise<{ code: number; reason: string }>(
    (resolve) =>
      (ws.onclose = (e) => {
        closedAs = { code: e.code, reason: e.reason };
        const fail = failWaiting;
        waiting = failWaiting = undefined;
        fail?.(closedError());
        resolve(closedAs);
      }),
  );
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error("socket error"));
  });
  const next = (timeoutMs?: number) =>
    new Promise<any>((resolve, reject) => {
      if (pending.length > 0) return resolve(pending.shift());
      if (closedAs) return reject(closedError());
      const t = timeoutMs === undefined ? undefined : setTimeout(() => ((waiting = failWaiting = undefined), reject(new Error("no frame"))), timeoutMs);
      waiting = (f) => {
        clearTimeout(t);
        resolve(f);
      };
      failWaiting = (e) => {
        clearTimeout(t);
        reject(e);
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
