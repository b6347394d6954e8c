/**
 * The load clients of scripts/bench: one timed request (HTTP or a frame on a kept Responses
 * WebSocket), and {@link CONCURRENCY} concurrent loops for a number of seconds over HTTP (wrk when
 * installed, else Bun's fetch) or over the Responses WebSocket (Bun's WebSocket client; wrk has none).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** Concurrent connections (sockets) of a load run. */
export const CONCURRENCY = 32;
/** Headers of every bench HTTP request (the Messages lanes need `anthropic-version`). */
export const HEADERS = { "content-type": "application/json", "anthropic-version": "2023-06-01" };

/** One request, read to the end: total ms, ms to the first body bytes, bytes received. */
export async function timedRequest(url: string, body: string): Promise<Timed> {
  const t0 = performance.now();
  const res = await fetch(url, { method: "POST", headers: HEADERS, body });
  let first = NaN;
  let bytes = 0;
  const reader = res.body!.getReader();
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    if (bytes === 0 && r.value.byteLength > 0) first = performance.now() - t0;
    bytes += r.value.byteLength;
  }
  return { total: performance.now() - t0, first, bytes, status: res.status };
}

/** One request's figures: total ms, ms to the first body bytes (first frame), bytes (WebSocket: characters) received, HTTP status (WebSocket: 200 completed, 502 failed, an error frame's status). */
export interface Timed {
  total: number;
  first: number;
  bytes: number;
  status: number;
}

/** A terminal frame of the Responses WebSocket: the reply's last event, or an error frame (SPEC 2.5). */
const TERMINAL_FRAME = /^\{"type":"(response\.completed|response\.incomplete|response\.failed|error)"/;

/**
 * A Responses WebSocket client as Codex uses it: one socket kept open, one `response.create` frame at
 * a time, the next sent once the previous reply's terminal frame arrived.
 */
export class BenchSocket {
  private pending: { resolve: (t: Timed) => void; reject: (e: Error) => void; t0: number; first: number; bytes: number } | undefined;
  private closedWith: Error | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.onmessage = (ev) => this.frame(ev.data as string);
    ws.onclose = (ev) => {
      this.closedWith = new Error(`the socket closed (${ev.code} ${ev.reason})`);
      this.pending?.reject(this.closedWith);
      this.pending = undefined;
    };
  }

  /** Opens a socket to `url` (`ws://…/v1/responses`); rejects when the upgrade fails. */
  static open(url: string): Promise<BenchSocket> {
    const ws = new WebSocket(url);
    return new Promise((resolve, reject) => {
      ws.onopen = () => resolve(new BenchSocket(ws));
      ws.onerror = () => reject(new Error(`WebSocket ${url}: the upgrade failed`));
    });
  }

  private frame(data: string): void {
    const p = this.pending;
    if (!p) return;
    if (p.bytes === 0) p.first = performance.now() - p.t0;
    p.bytes += data.length;
    const m = TERMINAL_FRAME.exec(data.slice(0, 40));
    if (!m) return;
    this.pending = undefined;
    const status = m[1] === "error" ? Number(/"status":(\d+)/.exec(data)?.[1] ?? 500) : m[1] === "response.failed" ? 502 : 200;
    p.resolve({ total: performance.now() - p.t0, first: p.first, bytes: p.bytes, status });
  }

  /** Sends one `response.create` frame and waits for its terminal frame. */
  send(frame: string): Promise<Timed> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject, t0: performance.now(), first: NaN, bytes: 0 };
      this.ws.send(frame);
    });
  }

  /** Closes the socket (the gateway aborts what runs on it). */
  close(): void {
    this.ws.close();
  }

  /** Whether the socket has closed (the gateway closes one idle for 10 minutes, RESPONSES_SOCKET_IDLE_MS). */
  get closed(): boolean {
    return this.closedWith !== undefined;
  }
}

/**
 * The socket kept in `sockets` for `url` (scripts/bench's sequential sections send one frame at a time
 * on one socket per URL), opened on first use and opened again when the one kept has closed: the
 * latency section's socket is used again by the streams section, which on a loaded machine starts more
 * than the gateway's 10-minute idle timeout later (r31, 2026-12-05 14:02 UTC: the run died on
 * "the socket closed (1000 idle)"). Rejects when the upgrade fails.
 */
export async function keptSocket(sockets: Map<string, Promise<BenchSocket>>, url: string): Promise<BenchSocket> {
  let s = sockets.get(url);
  if (s === undefined || (await s).closed) sockets.set(url, (s = BenchSocket.open(url)));
  return s;
}

/** wrk's path when installed (the HTTP load client then), else undefined. */
export const WRK = Bun.which("wrk");

/** A load run: requests answered 200 (WebSocket: completed responses), its seconds, everything else. */
export interface LoadResult {
  requests: number;
  seconds: number;
  errors: number;
  /** What the errors were, when there were any (wrk's counts by kind, the first status or socket error). */
  errorDetail?: string;
}

/** `wrk -t1 -c32` POSTing `body` to `url` for `seconds` (its Lua script and body file go in `dir`). */
export async function loadWrk(url: string, body: string, seconds: number, dir: string): Promise<LoadResult> {
  const bodyFile = join(dir, "wrk-body.json");
  writeFileSync(bodyFile, body);
  const script = join(dir, "wrk.lua");
  writeFileSync(
    script,
    `wrk.method = "POST"\nlocal f = io.open(${JSON.stringify(bodyFile)}, "rb")\nwrk.body = f:read("*a")\nf:close()\nwrk.headers["Content-Type"] = "application/json"\nwrk.headers["anthropic-version"] = "2023-06-01"\n`,
  );
  const p = Bun.spawn([WRK!, "-t1", `-c${CONCURRENCY}`, `-d${seconds}s`, "--latency", "-s", script, url], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  const m = /(\d+) requests in ([\d.]+)(ms|s|m)/.exec(out);
  if (!m) throw new Error(`wrk output not understood:\n${out}`);
  const secs = Number(m[2]) * (m[3] === "ms" ? 1e-3 : m[3] === "m" ? 60 : 1);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = (non2xx ? Number(non2xx[1]) : 0) + (sock ? Number(sock[1]) + Number(sock[2]) + Number(sock[3]) + Number(sock[4]) : 0);
  const errorDetail = errors > 0 ? `wrk: non-2xx ${non2xx?.[1] ?? 0}, connect ${sock?.[1] ?? 0}, read ${sock?.[2] ?? 0}, write ${sock?.[3] ?? 0}, timeout ${sock?.[4] ?? 0}` : undefined;
  return { requests: Number(m[1]), seconds: secs, errors, errorDetail };
}

/** The Bun HTTP load client (no wrk): 32 concurrent `fetch` loops for `seconds`. */
export async function loadBun(url: string, body: string, seconds: number): Promise<LoadResult> {
  const end = performance.now() + seconds * 1000;
  let requests = 0;
  let errors = 0;
  let errorDetail: string | undefined;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        try {
          const res = await fetch(url, { method: "POST", headers: HEADERS, body });
          await res.arrayBuffer();
          if (res.status === 200) requests++;
          else {
            errors++;
            errorDetail ??= `first: HTTP ${res.status}`;
          }
        } catch (e) {
          errors++;
          errorDetail ??= `first: ${e instanceof Error ? e.message : String(e)}`;
        }
      }
    }),
  );
  return { requests, seconds: (performance.now() - t0) / 1000, errors, errorDetail };
}

/**
 * The WebSocket load client: {@link CONCURRENCY} sockets, each sending `response.create` frames one
 * after another (the next once the previous reply's terminal frame arrived, as Codex does) for
 * `seconds`; a completed response counts as a request, anything else (an error frame,
 * `response.failed`, a closed socket) as an error.
 */
export async function loadWs(url: string, frame: string, seconds: number): Promise<LoadResult> {
  const opened = await Promise.all(Array.from({ length: CONCURRENCY }, () => BenchSocket.open(url)));
  const end = performance.now() + seconds * 1000;
  let requests = 0;
  let errors = 0;
  let errorDetail: string | undefined;
  const t0 = performance.now();
  await Promise.all(
    opened.map(async (s) => {
      while (performance.now() < end) {
        try {
          const x = await s.send(frame);
          if (x.status === 200) requests++;
          else {
            errors++;
            errorDetail ??= `first: status ${x.status}`;
          }
        } catch (e) {
          errors++;
          errorDetail ??= `first: ${e instanceof Error ? e.message : String(e)} after ${((performance.now() - t0) / 1000).toFixed(2)} s`;
          return;
        }
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  for (const s of opened) s.close();
  return { requests, seconds: secs, errors, errorDetail };
}
