/**
 * The setup every real-CLI test file (test/e2e/cli/) shares: a trap proxy that catches any call the
 * CLI tries to make to the internet, the pinned CLIs installed into the cache, and a gateway with the
 * file's config in front of a fake upstream in strict mode (a body the provider's API would refuse is
 * answered with that provider's 400 and recorded in `fake.violations`); all stopped after the file's tests.
 */
import { afterAll, beforeAll } from "bun:test";
import { ensureCli, INSTALL_HOOK_TIMEOUT_MS, type CliSpec } from "./cli-install.ts";
import { startTrapProxy, type TrapProxy } from "./cli-run.ts";
import { startGateway, type TestGateway } from "./gateway.ts";
import type { StrictOptions } from "./strict-upstream.ts";

/**
 * OpenAI's own model ids: a Chat request for one of them stands for OpenAI's API (a kind `openai`
 * provider); any other model on the Chat path for an openai-compatible server, as in the CLI tests' configs.
 */
const OPENAI_MODEL = /^(gpt-|chatgpt-|o\d)/;

/** The fake's strict mode for CLI tests (a gateway of a CLI test's own passes it as `fakeOptions.strict`). */
export const CLI_STRICT: StrictOptions = { openaiCompatible: (req) => !OPENAI_MODEL.test(req.model ?? "") };

/** What a CLI test file works with once its `beforeAll` has run. */
export interface CliSuite {
  /** The installed CLI executables, in the order of the specs given. */
  bins: string[];
  gw: TestGateway;
  trap: TrapProxy;
}

/**
 * Registers the file's `beforeAll` (trap proxy, CLIs, gateway with `yaml`, `{{FAKE}}` being the fake
 * upstream's URL; the fake strict, its Chat path OpenAI's API for OpenAI's models and an openai-compatible server's
 * for others, unless `gateway.fakeOptions` says otherwise) and `afterAll`, and returns the suite whose fields are set once `beforeAll` ran.
 */
export function cliSuite(clis: CliSpec[], yaml: string, gateway: Parameters<typeof startGateway>[1] = {}): CliSuite {
  const suite = { bins: [] as string[] } as CliSuite;
  beforeAll(async () => {
    suite.trap = startTrapProxy();
    for (const c of clis) suite.bins.push(await ensureCli(c));
    suite.gw = await startGateway(yaml, { ...gateway, fakeOptions: { strict: CLI_STRICT, ...gateway.fakeOptions } });
  }, clis.length * INSTALL_HOOK_TIMEOUT_MS);
  afterAll(async () => {
    await suite.gw?.stop();
    suite.trap?.stop();
  });
  return suite;
}
