/** A local alert-webhook receiver for tests: 127.0.0.1, port 0, every POSTed JSON body kept in order. */

/** A running receiver: its URL (path `/alerts`), the bodies it got, and how to stop it. */
export interface WebhookReceiver {
  url: string;
  got: any[];
  stop(): void;
}

/** Starts a receiver that answers every POST 204 after keeping its JSON body in `got`. */
export function webhookReceiver(): WebhookReceiver {
  const got: any[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      got.push(await req.json());
      return new Response(null, { status: 204 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/alerts`, got, stop: () => server.stop(true) };
}
