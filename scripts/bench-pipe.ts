#!/usr/bin/env bun
/**
 * The baseline of scripts/bench: the thinnest useful Bun proxy. Each request is forwarded to the same
 * path on the upstream (`fetch` with the client's body and content type) and the upstream's body is
 * piped back unchanged (`new Response(upstream.body)`). No routing, no auth, no observation.
 *
 * Usage: `UPSTREAM=http://127.0.0.1:PORT bun scripts/bench-pipe.ts` — listens on 127.0.0.1:0 and
 * prints `{"port":N}` on stdout. Start it with BUN_CONFIG_MAX_HTTP_REQUESTS raised (as scripts/bench
 * does) so its fetch does not cap concurrent upstream calls at 256.
 */

/** Starts the raw pipe in front of `upstream` on 127.0.0.1:`port` (0 = any free port). */
export function startRawPipe(upstream: string, port = 0) {
  const base = upstream.replace(/\/+$/, "");
  return Bun.serve({
    hostname: "127.0.0.1",
    port,
    idleTimeout: 0,
    development: false,
    async fetch(req) {
      const url = new URL(req.url);
      const res = await fetch(base + url.pathname + url.search, {
        method: req.method,
        headers: { "content-type": req.headers.get("content-type") ?? "application/json" },
        body: req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer(),
        signal: req.signal,
      });
      return new Response(res.body, { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "application/json" } });
    },
  });
}

if (import.meta.main) {
  const upstream = process.env.UPSTREAM;
  if (!upstream) {
    process.stderr.write("set UPSTREAM=http://127.0.0.1:PORT\n");
    process.exit(2);
  }
  const server = startRawPipe(upstream, Number(process.env.PORT ?? 0));
  process.stdout.write(JSON.stringify({ port: server.port }) + "\n");
}
