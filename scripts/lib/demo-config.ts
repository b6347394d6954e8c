/**
 * scripts/demo's configuration: one provider per wire format, all pointing at the fake upstream at
 * `fakeUrl` (http://127.0.0.1:PORT, no trailing slash), two of them without an account (served through
 * their implicit `<provider>-keyless` account), a combo over two formats and an alias. Shared with the
 * dashboard's new-operator browser test, so that what it checks is what `scripts/demo` shows.
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
`;
}
