/**
 * scripts/demo's configuration: one provider per wire format, all pointing at the fake upstream at
 * `fakeUrl` (http://127.0.0.1:PORT, no trailing slash), two of them without an account (served through
 * their implicit `<provider>-keyless` account), a combo over two formats and an alias, and invented demo
 * prices (`settings.pricing`, USD per million tokens) for the three models it names, so costs and USD
 * budgets show out of the box instead of "unpriced". Shared with the dashboard's new-operator browser
 * test, so that what it checks is what `scripts/demo` shows.
 */
export function demoConfigYaml(fakeUrl: string): string {
  return `# switchyard demo: every provider points at a local fake upstream (${fakeUrl})
providers:
  - { id: demo-anthropic, kind: anthropic-compatible, base_url: "${fakeUrl}" }
  - { id: demo-chat, kind: openai-compatible, base_url: "${fakeUrl}/v1" }
  - { id: demo-gemini, kind: gemini, base_url: "${fakeUrl}" }
accounts:
  - { id: demo-gemini-key, provider: demo-gemini, api_key: not-a-real-key }
combos:
  - name: demo
    targets:
      - model: demo-anthropic/claude-demo
      - model: demo-chat/gpt-demo
aliases:
  fast: demo-chat/gpt-demo
settings:
  # Invented demo prices (USD per million tokens; no real model is priced here), so the dashboard and
  # \`switchyard usage\` show costs and USD budgets. A real config's prices come from the bundled price table.
  pricing:
    demo-anthropic/claude-demo: { input: 3, output: 15, cache_read: 0.3 }
    demo-chat/gpt-demo: { input: 1.25, output: 10 }
    demo-gemini/gemini-demo: { input: 0.5, output: 3 }
`;
}
