/**
 * `switchyard import claude-code|codex [--from PATH] [--account NAME] [--provider ID] [--priority N]` (SPEC 2.2,
 * P-9): adopts the login a vendor CLI already keeps on this machine (src/oauth/credential-files.ts),
 * reading the file and never modifying it, and hands the credential to the running instance
 * (`POST /admin/api/accounts`). Importing again replaces the account's credential and lifts a
 * quarantine. No token is printed.
 */
import { defaultCredentialPath, readCredentialFile } from "../oauth/credential-files.ts";
import { isSubscription } from "../oauth/protocol.ts";
import { formatElapsed } from "../../formats/wait-words.ts";
import { ACCOUNT_ID, ACCOUNT_ID_RULE, parsePriority } from "../admin/subscription-routes.ts";
import type { AdminCall, CliIo } from "./routing.ts";
import { visible } from "./terminal.ts";

/** Options of `switchyard import`. */
export interface ImportCommandOptions {
  /** The credential file; default the CLI's own (see credential-files.ts). */
  from?: string;
  account?: string;
  provider?: string;
  /** `--priority N` as typed: the account's place in its provider's list, lower first; absent keeps a re-imported account's (0 for a new one). */
  priority?: string;
  env?: Record<string, string | undefined>;
  /** ms since the epoch (tests); default Date.now(). */
  now?: number;
}

/** Reads the file and stores the account; prints one result line. */
export async function importCommand(kind: string | undefined, opts: ImportCommandOptions, call: AdminCall, io: CliIo): Promise<void> {
  if (!kind || !isSubscription(kind)) io.fail("usage: switchyard import claude-code|codex [--from PATH] [--account NAME] [--provider ID] [--priority N]", 2);
  if (opts.account !== undefined && !ACCOUNT_ID.test(opts.account)) io.fail(`--account ${JSON.stringify(opts.account)}: an account name is ${ACCOUNT_ID_RULE}`, 2);
  const priority = parsePriority(opts.priority);
  if (priority.problem) io.fail(priority.problem, 2);
  const path = opts.from ?? defaultCredentialPath(kind, opts.env);
  let imported;
  try {
    imported = readCredentialFile(kind, path);
  } catch (e) {
    io.fail(`cannot import: ${e instanceof Error ? e.message : String(e)}`);
  }
  const c = imported.credential;
  const credential: Record<string, unknown> = { type: "oauth", access_token: c.accessToken };
  if (c.refreshToken) credential.refresh_token = c.refreshToken;
  if (c.expiresAt !== undefined) credential.expires_at = c.expiresAt;
  if (c.accountId) credential.account_id = c.accountId;
  const r = (await call("POST", "/accounts", { provider: opts.provider ?? kind, kind, id: opts.account, credential, email: imported.email, plan: imported.plan, origin: "import", priority: priority.value })) as {
    id: string;
    provider: string;
    created: boolean;
    unquarantined?: boolean;
    reenabled?: boolean;
    sameLogin?: string[];
  };
  // An expired access token (the instance refuses one without a refresh token) is renewed at once: say so, and where a failure shows.
  const now = opts.now ?? Date.now();
  const expired = c.expiresAt !== undefined && c.expiresAt <= now ? `; its access token expired ${formatElapsed(now - c.expiresAt)} ago and is being refreshed (switchyard accounts status says if that fails)` : "";
  io.out(
    `imported ${visible(path)} as account ${r.id} (provider ${r.provider}${priority.value !== undefined ? `, priority ${priority.value}` : ""}) ${r.created ? "added" : "updated"}${r.reenabled ? ", enabled again (it was disabled)" : ""}${r.unquarantined ? ", quarantine lifted" : ""}${imported.plan ? `; plan ${imported.plan}` : ""}; the file was not modified${expired}`,
  );
  const same = r.sameLogin ?? [];
  if (same.length > 0) {
    io.out(
      `warning: ${same.join(", ")} ${same.length === 1 ? "holds" : "hold"} the same login: one refresh token, which the first refresh rotates, so the other account is then quarantined; keep one (switchyard accounts remove ${same[0]})`,
    );
  }
}
