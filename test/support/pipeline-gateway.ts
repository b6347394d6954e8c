/**
 * The real request pipeline without HTTP (createGateway → order → attempt loop → pick → commit) over a
 * real AccountRegistry with a recording store, a settable clock and a seeded account order: the test
 * gives the providers, the accounts and the executor (what an upstream answers), and reads what the
 * gateway finished. Shared by test/accounts/routing-loop.test.ts, test/pipeline/client-signal.test.ts and
 * test/pipeline/event-sink-order.test.ts.
 */
import type { Finished } from "../../pipeline/context.ts";
import type { Executor } from "../../pipeline/execute.ts";
import { createGateway, type Gateway } from "../../pipeline/gateway.ts";
import { seededRng, TargetOrder } from "../../pipeline/order.ts";
import type { Account, ProviderInfo, RouteTrace } from "../../pipeline/ports.ts";
import type { ComboSpec } from "../../pipeline/resolve.ts";
import { AccountRegistry, type RegistryOptions } from "../../src/accounts/registry.ts";
import type { AccountState } from "../../src/store/types.ts";
import { recordingStore, settableClock } from "../accounts/helpers.ts";

/** No cooldowns, locks, bindings or anything else: the state a fresh store loads. */
export const EMPTY_STATE: AccountState = { cooldowns: [], locks: [], removedModels: [], quarantined: [], circuits: [], quotas: [], bindings: [], discoveredModels: [] };

/** What {@link pipelineGateway} builds. */
export interface PipelineGateway {
  gateway: Gateway;
  /** `now` set by the test (starts at 1_700_000_000_000 ms); `sleep` really waits. */
  clock: ReturnType<typeof settableClock>;
  registry: AccountRegistry;
  /** Every call the registry made on its store (method and arguments), in order. */
  storeCalls: Array<{ method: string; args: unknown[] }>;
  /** What each request finished with (its outcome, status, account…), in the order they finished. */
  finished: Finished[];
  /** The route trace of each finished request, in the same order. */
  traces: RouteTrace[];
}

/**
 * Builds the pipeline over `providers` and `accounts` (no API key required, 1 MiB bodies, 8 attempts,
 * a 60 s pre-commit deadline; the account order seeded with 1) with `executor` answering every upstream
 * call; `combos` are the routing table's, `registry` the registry's options.
 */
export function pipelineGateway(opts: {
  providers: ProviderInfo[];
  accounts: Account[];
  executor: Executor;
  combos?: ComboSpec[];
  registry?: RegistryOptions;
  /** What the gateway gets as its pool and its health port in place of the registry itself (e.g. the registry behind a Proxy that notes calls). */
  ports?: (registry: AccountRegistry) => { pool: AccountRegistry; health: AccountRegistry };
  /** Called after each request finished is recorded. */
  onFinish?: (f: Finished) => void;
}): PipelineGateway {
  const clock = settableClock();
  const { store, calls } = recordingStore();
  const registry = new AccountRegistry(store, clock, { rng: seededRng(1), ...opts.registry });
  const providers = new Map(opts.providers.map((p) => [p.id, p]));
  registry.setAccounts(opts.accounts, providers);
  registry.loadState(EMPTY_STATE);
  const table = { providers, aliases: new Map<string, string>(), combos: new Map((opts.combos ?? []).map((c) => [c.name, c])) };
  const order = new TargetOrder({ routing: () => table, capacityAdapter: () => ({ images: [], pdf: [], audio: [], video: [] }), quota: (t) => registry.modelQuota(t.provider.id, t.model, t.accountId) });
  const finished: Finished[] = [];
  const traces: RouteTrace[] = [];
  const gateway = createGateway({
    clock,
    keys: { lookup: () => undefined, any: () => false },
    settings: () => ({ requireApiKey: false, maxBodyBytes: 1 << 20, maxAttempts: 8, precommitDeadlineMs: 60_000 }),
    routing: () => table,
    order,
    ...(opts.ports?.(registry) ?? { pool: registry, health: registry }),
    executorFor: () => opts.executor,
    finish: (ctx, f) => {
      traces.push(ctx.trace);
      finished.push(f);
      opts.onFinish?.(f);
    },
  });
  return { gateway, clock, registry, storeCalls: calls, finished, traces };
}
