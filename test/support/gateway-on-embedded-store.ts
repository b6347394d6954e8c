/**
 * A describe block's switchyard on the embedded store (the "on the embedded store" half of a test
 * written for both stores; test/support/instance-on-postgres.ts is the other): a fake upstream with the
 * test's replies and an in-process gateway in front of it.
 */
import { afterAll, beforeAll } from "bun:test";
import { startFakeUpstream } from "./fake-upstream.ts";
import { startGateway, type TestGateway } from "./gateway.ts";
import type { InstanceOnPostgresOptions } from "./instance-on-postgres.ts";

/**
 * Call inside a describe block: its beforeAll starts the fake upstream, sets its replies (`answer`) and
 * starts the gateway on `yaml` (given the upstream's URL) with `env`; its afterAll stops both. Read
 * `.gateway` in the tests (its `fake` is the upstream; undefined before the beforeAll ran).
 */
export function gatewayOnEmbeddedStore(opts: Omit<InstanceOnPostgresOptions, "database">): { readonly gateway: TestGateway } {
  let gateway: TestGateway | undefined;
  beforeAll(async () => {
    const fake = await startFakeUpstream();
    opts.answer?.(fake);
    gateway = await startGateway(opts.yaml(fake.url), { fake, env: opts.env });
  });
  afterAll(async () => {
    await gateway?.stop();
  });
  return {
    get gateway() {
      return gateway!;
    },
  };
}
