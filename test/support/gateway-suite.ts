/**
 * The setup many end-to-end test files share: one gateway (next to a fake upstream) for the whole
 * file, the fake's recordings and handler cleared after each test.
 */
import { afterAll, afterEach, beforeAll } from "bun:test";
import { startGateway, type TestGateway } from "./gateway.ts";

/**
 * Registers a test file's shared gateway: started in `beforeAll` (same arguments as {@link startGateway}),
 * stopped in `afterAll`, its fake upstream's recordings and handler cleared after each test. Returns the
 * holder whose `gw` is set once `beforeAll` ran.
 */
export function gatewaySuite(...args: Parameters<typeof startGateway>): { gw: TestGateway } {
  const suite = {} as { gw: TestGateway };
  beforeAll(async () => {
    suite.gw = await startGateway(...args);
  });
  afterAll(async () => {
    await suite.gw?.stop();
  });
  afterEach(() => {
    suite.gw.fake.reset();
    suite.gw.fake.handle(undefined);
  });
  return suite;
}
