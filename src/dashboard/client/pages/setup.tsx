/**
 * Setup (SPEC 9.4): for Claude Code, Codex and Gemini CLI the `switchyard setup` command that writes
 * the CLI's settings (src/setup-commands.ts, the same text the command line takes), then copy-paste
 * snippets to do it by hand, with this instance's URL (the page's own origin) and the model names this
 * gateway answers to (combos and aliases); what to enter in Cursor.
 */
import { CODEX_PROVIDER_ID, codexProviderTable, tomlValue } from "../../../codex-provider.ts";
import { cursorSteps, SETUP_CLI_NAMES, setupCommandLine, type SetupCli } from "../../../setup-commands.ts";
import { api } from "../api.ts";
import { Card, CopyButton, Snippet, useData } from "../components.tsx";
import type { Alias, Combo, Provider } from "../types.ts";

/** Each CLI's own vendor: the provider kinds that serve it natively and its usual model. */
const VENDORS = {
  claude: { kinds: ["anthropic", "anthropic-compatible", "claude-code"], model: "claude-sonnet-5-5", general: "claude-sonnet-5-5", builtin: "anthropic" },
  codex: { kinds: ["openai-responses", "openai", "codex"], model: "gpt-5-codex", general: "gpt-5", builtin: "openai" },
  gemini: { kinds: ["gemini"], model: "gemini-2.5-pro", general: "gemini-2.5-pro", builtin: "gemini" },
} as const;

/**
 * The model a CLI's snippet names when the gateway has no combo or alias: a model of a provider of the
 * CLI's own vendor that has an account (its first configured or discovered model, else the vendor's
 * usual one), else any provider with an account and a known model, else a provider of another vendor
 * with an account and that vendor's general model (`up/gpt-5` for Claude Code on a gateway with only an
 * OpenAI account that lists no models), else the built-in provider's — so a copied snippet reaches an
 * account of this gateway instead of an unconfigured built-in provider.
 */
export function snippetModel(cli: keyof typeof VENDORS, providers: readonly Provider[]): string {
  const v = VENDORS[cli];
  const served = providers.filter((p) => (p.accounts?.length ?? 0) > 0);
  const firstModel = (p: Provider) => Object.keys(p.models ?? {})[0] ?? p.discoveredModels?.[0];
  for (const kind of v.kinds) {
    const p = served.find((x) => x.kind === kind);
    if (p) return `${p.id}/${firstModel(p) ?? v.model}`;
  }
  const any = served.find((p) => firstModel(p) !== undefined);
  if (any) return `${any.id}/${firstModel(any)}`;
  for (const p of served) {
    const other = Object.values(VENDORS).find((x) => (x.kinds as readonly string[]).includes(p.kind));
    if (other) return `${p.id}/${other.general}`;
  }
  return `${v.builtin}/${v.model}`;
}

/**
 * What the snippets hold where a client key goes when keys are required (a remote browser, or
 * `require_api_key`): the user replaces it with a key of theirs; the page never shows a secret.
 */
export const KEY_PLACEHOLDER = "sy-YOUR-KEY";

/** What a snippet puts in the client's key variable, and the comment line above it saying why. */
export interface KeyHint {
  value: string;
  note: string;
}

/** The widest line of a setup command on the page: a card about 50 monospace characters wide shows it unwrapped. */
const COMMAND_WIDTH = 46;

/**
 * The `switchyard setup` command of each CLI for an instance at `origin` with the model its snippet
 * names; `--client-key` with the placeholder where keys are required (`key` is not the loopback one).
 */
export function setupCommands(origin: string, model: (cli: keyof typeof VENDORS) => string, key: KeyHint): Record<SetupCli, string> {
  const keyed = key.value === KEY_PLACEHOLDER;
  // where keys are required, setup asks the admin API about a model GET /v1/models does not list (src/cli/setup-command.ts)
  const notes = keyed ? `# ${key.note};\n# setup checks a model /v1/models leaves out with\n# the admin API: export SWITCHYARD_ADMIN_KEY=<key>\n` : "";
  const line = (cli: SetupCli, vendor: keyof typeof VENDORS) => notes + setupCommandLine(cli, origin, { model: model(vendor), clientKey: keyed ? KEY_PLACEHOLDER : undefined, width: COMMAND_WIDTH });
  return { "claude-code": line("claude-code", "claude"), codex: line("codex", "codex"), gemini: line("gemini", "gemini") };
}

/**
 * The snippets for an instance at `origin`: `model` (a combo or alias of this gateway) as the model
 * name when there is one, else {@link snippetModel} for each CLI; `commands` are the `switchyard setup`
 * lines ({@link setupCommands}), the others the same by hand. Comments stand on lines of their own
 * (never after a command), so a card about 50 monospace characters wide shows every line unwrapped.
 */
export function setupSnippets(origin: string, model: string | undefined, key: KeyHint, providers: readonly Provider[] = []) {
  const m = (cli: keyof typeof VENDORS) => model ?? snippetModel(cli, providers);
  // the table `switchyard setup codex` writes (src/codex-provider.ts), with the key from a variable
  const codexTable = codexProviderTable(origin)
    .map(([k, v]) => `${k} = ${tomlValue(v)}`)
    .join("\n");
  return {
    claude: `export ANTHROPIC_BASE_URL=${origin}\n# ${key.note}\nexport ANTHROPIC_API_KEY=${key.value}\nclaude --model ${m("claude")}`,
    codex: `# ~/.codex/config.toml\nmodel = "${m("codex")}"\nmodel_provider = "${CODEX_PROVIDER_ID}"\n\n[model_providers.${CODEX_PROVIDER_ID}]\n${codexTable}\nenv_key = "SWITCHYARD_KEY"\n\n# then, in the shell:\n# ${key.note}\nexport SWITCHYARD_KEY=${key.value}\ncodex`,
    // A Gemini CLI never set up answers "Invalid auth method selected." until its settings.json selects
    // API-key auth (README, Gemini CLI), which `switchyard setup gemini` writes; by hand it is one setting.
    gemini: `export GOOGLE_GEMINI_BASE_URL=${origin}\n# ${key.note}\nexport GEMINI_API_KEY=${key.value}\n# once, API-key auth in ~/.gemini/settings.json:\n#   "security": { "auth": {\n#     "selectedType": "gemini-api-key" } }\ngemini --model ${m("gemini")}`,
    sdk: `# OpenAI SDKs\nbase_url = "${origin}/v1"\n# Anthropic SDKs\nbase_url = "${origin}"`,
    commands: setupCommands(origin, m, key),
    cursor: cursorSteps(origin, key.value).join("\n"),
  };
}

export function SetupSnippets({ compact }: { compact?: boolean }) {
  const names = useData(async () => {
    const [combos, aliases, providers] = await Promise.all([
      api<{ combos: Combo[] }>("/combos").catch(() => ({ combos: [] as Combo[] })),
      api<{ aliases: Alias[] }>("/aliases").catch(() => ({ aliases: [] as Alias[] })),
      api<{ providers: Provider[] }>("/providers").catch(() => ({ providers: [] as Provider[] })),
    ]);
    return { names: [...aliases.aliases.map((a) => a.name), ...combos.combos.map((c) => c.name)], providers: providers.providers };
  });
  const loopback = document.querySelector<HTMLMetaElement>('meta[name="access-mode"]')?.content === "loopback";
  // Never a key's secret (SPEC 9.4): from loopback any value passes; elsewhere keys are required, and
  // the user puts one of theirs in place of the placeholder.
  const key: KeyHint = loopback ? { value: "placeholder", note: "any key value works from this machine" } : { value: KEY_PLACEHOLDER, note: `replace ${KEY_PLACEHOLDER} with a client key (Keys page)` };
  const model = names.data?.names[0];
  const s = setupSnippets(location.origin, model, key, names.data?.providers);
  // each CLI: the setup command first (it also writes the model's context window, Claude Code's
  // modelOverrides, Codex's model catalog, Gemini CLI's helper models), then the same by hand
  const card = (cli: SetupCli, manual: string) => (
    <Card title={SETUP_CLI_NAMES[cli]}>
      <Snippet label={`switchyard setup (on the CLI's machine; switchyard setup ${cli} --undo puts its settings back)`} code={s.commands[cli]} />
      <Snippet label="or by hand" code={manual} />
    </Card>
  );
  return (
    <div class={compact ? "grid-2 snippet-grid" : ""}>
      {card("claude-code", s.claude)}
      {card("codex", s.codex)}
      {card("gemini", s.gemini)}
      {!compact && (
        <Card title="Cursor" actions={<CopyButton code={s.cursor} />}>
          <Snippet code={s.cursor} copy={false} />
        </Card>
      )}
      {!compact && (
        <Card title="Any OpenAI or Anthropic SDK" actions={<CopyButton code={s.sdk} />}>
          <Snippet code={s.sdk} copy={false} />
        </Card>
      )}
    </div>
  );
}

export function SetupPage() {
  return (
    <div class="page">
      <header class="page-head">
        <div>
          <h1>Setup</h1>
          <p class="muted">
            Point your agent at <code>{location.origin}</code>. Model names: <code>provider/model</code> goes straight to that provider; a combo or alias name routes through it.
          </p>
        </div>
      </header>
      <SetupSnippets />
    </div>
  );
}
