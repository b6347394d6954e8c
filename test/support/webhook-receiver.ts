/**
 * A local alert-webhook receiver for tests (SPEC 9.7's webhook as a user would run one): an HTTP
 * server on 127.0.0.1, port 0, that reads every request's JSON body, answers it as the test says, and
 * keeps what it answered with a 2xx, in the order answered.
 */

/** One request the receiver answered with a 2xx: its headers (names lower-cased) and its JSON body. */
export interface ReceivedHook<T> {
  headers: Record<string, string>;
  body: T;
}

/** A running receiver: its URL, what it got, and how to stop it. */
export interface WebhookReceiver<T = any> {
  /** `http://127.0.0.1:PORT` + the path asked for (default `/alerts`; the server answers any path). */
  url: string;
  /** The JSON bodies of the requests answered with a 2xx, in the order answered. */
  got: T[];
  /** The same requests with their headers (`got[i]` is `received[i].body`). */
  received: ReceivedHook<T>[];
  /** Requests that arrived so far, each counted as it comes in (before its body is read and it is answered). */
  readonly hits: number;
  /** Stops the server, closing open connections (a request still waiting for its answer included). */
  stop(): void;
}

/** How a receiver answers: `answer` gets each request's JSON body and gives the status (default 204), `path` is the URL's path. */
export interface WebhookReceiverOptions<T> {
  /**
   * The status to answer `body` with (the `hit`-th request, from 1); may wait (e.g. for the test to
   * let it through) or never resolve (a hung receiver: the request is never answered). Default: 204.
   */
  answer?: (body: T, hit: number) => number | Promise<number>;
  /** The path of {@link WebhookReceiver.url} (default `/alerts`). */
  path?: string;
}

/**
 * Starts a receiver: every request is counted in `hits`, its JSON body read and handed to `answer`,
 * and answered with the status `answer` gives (no body); a 2xx answer keeps the body (and headers)
 * in `got` / `received`. A request whose body is not JSON is answered 500 (Bun's answer to the
 * handler's error) and not kept. The caller stops it.
 */
export function webhookReceiver<T = any>(opts: WebhookReceiverOptions<T> = {}): WebhookReceiver<T> {
  const answer = opts.answer ?? (() => 204);
  const got: T[] = [];
  const received: ReceivedHook<T>[] = [];
  let hits = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const hit = ++hits;
      const headers = Object.fromEntries(req.headers);
      const body = (await req.json()) as T;
      const status = await answer(body, hit);
      if (status >= 200 && status < 300) {
        got.push(body);
        received.push({ headers, body });
      }
      return new Response(null, { status });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}${opts.path ?? "/alerts"}`,
    got,
    received,
    get hits() {
      return hits;
    },
    stop: () => server.stop(true),
  };
}
