/**
 * More hand-written client requests for the upstream conformance test (see ./conformance-requests.ts):
 * settings of one API that meet another API's cross-field rules, and provider-specific tools.
 */
import type { ConformanceRequest } from "./conformance-requests.ts";

/** Small valid payloads and a tool schema the requests share. */
export const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
export const PDF = "JVBERi0xLjQKJcOkw7zDtsOfCjEgMCBvYmoKPDwvVHlwZS9DYXRhbG9nPj4KZW5kb2JqCnRyYWlsZXIKPDwvUm9vdCAxIDAgUj4+CiUlRU9G";
export const WEATHER_PARAMS = {
  type: "object",
  properties: { city: { type: "string", description: "City name" }, unit: { type: "string", enum: ["c", "f"] }, days: { type: "integer", minimum: 1, maximum: 7 } },
  required: ["city"],
  additionalProperties: false,
};

/**
 * Combinations where one API's settings meet another's cross-field rules (reasoning with forced tools
 * or sampling, small output limits, many stop sequences, tool names other APIs restrict, parallel calls).
 */
export const crossings: ConformanceRequest[] = [
  {
    id: "chat-reasoning-forced-tool",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [{ role: "user", content: "Weather in Paris?" }],
      tools: [{ type: "function", function: { name: "get_weather", parameters: WEATHER_PARAMS } }],
      tool_choice: "required",
      reasoning_effort: "high",
      temperature: 0.5,
      top_p: 0.5,
    },
  },
  {
    id: "chat-reasoning-small-limit",
    clientFormat: "openai-chat",
    body: { model: "m", messages: [{ role: "user", content: "Quick: 2+2?" }], reasoning_effort: "low", max_completion_tokens: 800 },
  },
  {
    id: "chat-reasoning-minimal",
    clientFormat: "openai-chat",
    body: { model: "m", messages: [{ role: "user", content: "Quick: 2+2?" }], reasoning_effort: "minimal" },
  },
  {
    id: "chat-reasoning-none",
    clientFormat: "openai-chat",
    body: { model: "m", messages: [{ role: "user", content: "Quick: 2+2?" }], reasoning_effort: "none" },
  },
  {
    id: "chat-parallel-calls",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [
        { role: "user", content: "Weather in Paris and Rome?" },
        {
          role: "assistant",
          content: "Checking both.",
          tool_calls: [
            { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
            { id: "call_b", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_a", content: "18C" },
        { role: "tool", tool_call_id: "call_b", content: [{ type: "text", text: "25C" }] },
      ],
      tools: [{ type: "function", function: { name: "get_weather", parameters: WEATHER_PARAMS } }],
      tool_choice: "none",
    },
  },
  {
    id: "chat-empty-tool-result",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [
        { role: "user", content: "Touch a.txt" },
        { role: "assistant", tool_calls: [{ id: "call_t", type: "function", function: { name: "touch", arguments: "" } }] },
        { role: "tool", tool_call_id: "call_t", content: "" },
      ],
      tools: [{ type: "function", function: { name: "touch" } }],
    },
  },
  {
    id: "anthropic-many-stops",
    clientFormat: "anthropic-messages",
    body: { model: "m", max_tokens: 100, messages: [{ role: "user", content: "Count." }], stop_sequences: ["a1", "a2", "a3", "a4", "a5", "a6"] },
  },
  {
    id: "anthropic-tool-names",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 100,
      messages: [
        { role: "user", content: "Read it." },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_n", name: "mcp__filesystem_server_with_a_long_name__read_text_file_with_options", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_n", content: "ok" }] },
      ],
      tools: [
        { name: "mcp__filesystem_server_with_a_long_name__read_text_file_with_options", input_schema: { type: "object" } },
        { name: "9lives", input_schema: { type: "object" } },
      ],
    },
  },
  {
    id: "anthropic-thinking-tool-any",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 4000,
      thinking: { type: "enabled", budget_tokens: 2000 },
      messages: [{ role: "user", content: "Weather in Paris?" }],
      tools: [{ name: "get_weather", input_schema: WEATHER_PARAMS }],
      tool_choice: { type: "auto" },
      temperature: 1,
    },
  },
  {
    id: "anthropic-thinking-disabled",
    clientFormat: "anthropic-messages",
    body: { model: "m", max_tokens: 100, thinking: { type: "disabled" }, messages: [{ role: "user", content: "Hi" }] },
  },
  {
    id: "responses-reasoning-forced-tool",
    clientFormat: "openai-responses",
    body: {
      model: "m",
      input: "Weather in Paris?",
      tools: [{ type: "function", name: "get_weather", parameters: WEATHER_PARAMS, strict: false }],
      tool_choice: { type: "function", name: "get_weather" },
      reasoning: { effort: "medium" },
      temperature: 0.4,
      max_output_tokens: 1500,
    },
  },
  {
    id: "gemini-thinking-forced-tool",
    clientFormat: "gemini",
    body: {
      contents: [{ role: "user", parts: [{ text: "Weather in Paris?" }] }],
      tools: [{ functionDeclarations: [{ name: "get_weather", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } } } }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY" } },
      generationConfig: { thinkingConfig: { thinkingBudget: 1024 }, temperature: 0.3, topK: 20, maxOutputTokens: 3000 },
    },
  },
  {
    id: "gemini-parallel-calls",
    clientFormat: "gemini",
    body: {
      contents: [
        { role: "user", parts: [{ text: "Weather in Paris and Rome?" }] },
        { role: "model", parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }, { functionCall: { name: "get_weather", args: { city: "Rome" } } }] },
        { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { t: "18C" } } }, { functionResponse: { name: "get_weather", response: { t: "25C" } } }] },
      ],
      tools: [{ functionDeclarations: [{ name: "get_weather", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } } } }] }],
    },
  },
];

/** Provider-specific tools and newer request members a client may send to a translated target. */
export const special: ConformanceRequest[] = [
  {
    id: "anthropic-server-tools",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 300,
      messages: [
        { role: "user", content: "Search the news." },
        {
          role: "assistant",
          content: [
            { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "news" } },
            { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [{ type: "web_search_result", url: "https://example.com/a", title: "A", encrypted_content: "e1" }] },
            { type: "text", text: "Found A." },
          ],
        },
        { role: "user", content: "More?" },
      ],
      tools: [
        { type: "web_search_20250305", name: "web_search", max_uses: 3 },
        { type: "bash_20250124", name: "bash" },
        { name: "get_weather", input_schema: WEATHER_PARAMS },
      ],
    },
  },
  {
    id: "anthropic-tool-result-document",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 300,
      messages: [
        { role: "user", content: "Fetch it." },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_d", name: "fetch", input: { url: "https://example.com/a.pdf" } }] },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_d",
              content: [
                { type: "document", source: { type: "base64", media_type: "application/pdf", data: PDF } },
                { type: "search_result", source: "https://example.com/b", title: "B", content: [{ type: "text", text: "b text" }] },
              ],
            },
          ],
        },
      ],
      tools: [{ name: "fetch", input_schema: { type: "object", properties: { url: { type: "string" } } } }],
    },
  },
  {
    id: "responses-builtin-tools",
    clientFormat: "openai-responses",
    body: {
      model: "m",
      input: "Look it up.",
      tools: [
        { type: "web_search" },
        { type: "file_search", vector_store_ids: ["vs_1"] },
        { type: "custom", name: "apply_patch", description: "Apply a patch", format: { type: "grammar", syntax: "lark", definition: "start: /.+/" } },
        { type: "function", name: "get_weather", parameters: WEATHER_PARAMS, strict: true },
      ],
    },
  },
  {
    id: "responses-custom-tool-history",
    clientFormat: "openai-responses",
    body: {
      model: "m",
      input: [
        { role: "user", content: "Patch it." },
        { type: "custom_tool_call", call_id: "call_p", name: "apply_patch", input: "*** Begin Patch" },
        { type: "custom_tool_call_output", call_id: "call_p", output: "done" },
      ],
      tools: [{ type: "custom", name: "apply_patch", description: "Apply a patch" }],
    },
  },
  {
    id: "responses-json-object",
    clientFormat: "openai-responses",
    body: { model: "m", input: "JSON please.", text: { format: { type: "json_object" } }, instructions: "Reply in JSON." },
  },
  {
    id: "chat-custom-and-allowed-tools",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [{ role: "user", content: "Patch it." }],
      tools: [
        { type: "custom", custom: { name: "apply_patch", description: "Apply a patch" } },
        { type: "function", function: { name: "get_weather", parameters: WEATHER_PARAMS } },
      ],
      tool_choice: { type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "get_weather" } }] } },
    },
  },
  {
    id: "chat-web-search-prediction",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [{ role: "user", content: "Edit the file." }],
      prediction: { type: "content", content: "const a = 1;" },
      web_search_options: { search_context_size: "low" },
    },
  },
  {
    id: "gemini-builtin-tools",
    clientFormat: "gemini",
    body: {
      contents: [{ role: "user", parts: [{ text: "Search and compute." }] }],
      tools: [{ googleSearch: {} }, { codeExecution: {} }, { functionDeclarations: [{ name: "get_weather", parametersJsonSchema: WEATHER_PARAMS }] }],
    },
  },
  {
    id: "gemini-code-history",
    clientFormat: "gemini",
    body: {
      contents: [
        { role: "user", parts: [{ text: "Compute 2**10." }] },
        { role: "model", parts: [{ executableCode: { language: "PYTHON", code: "print(2**10)" } }, { codeExecutionResult: { outcome: "OUTCOME_OK", output: "1024" } }, { text: "1024" }] },
        { role: "user", parts: [{ text: "Thanks." }] },
      ],
    },
  },
  {
    id: "responses-only-builtin-tools",
    clientFormat: "openai-responses",
    body: { model: "m", input: "Search it.", tools: [{ type: "web_search" }], tool_choice: "required", parallel_tool_calls: false },
  },
  {
    id: "anthropic-only-server-tools",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 200,
      messages: [{ role: "user", content: "Search it." }],
      tools: [{ type: "web_search_20250305", name: "web_search" }],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
    },
  },
  {
    id: "gemini-tool-config-only-builtin",
    clientFormat: "gemini",
    body: { contents: [{ role: "user", parts: [{ text: "Search it." }] }], tools: [{ googleSearch: {} }], toolConfig: { functionCallingConfig: { mode: "AUTO" } } },
  },
  {
    id: "chat-custom-tool-only",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [{ role: "user", content: "Patch it." }],
      tools: [{ type: "custom", custom: { name: "apply_patch" } }],
      tool_choice: "required",
      parallel_tool_calls: true,
    },
  },
  {
    id: "anthropic-complex-tool-schema",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 200,
      messages: [{ role: "user", content: "Edit." }],
      tools: [
        {
          name: "edit",
          input_schema: {
            $schema: "https://json-schema.org/draft/2020-12/schema",
            type: "object",
            $defs: { pos: { type: "object", properties: { line: { type: "integer", minimum: 0, exclusiveMaximum: 100000 } }, required: ["line"] } },
            properties: {
              path: { type: "string", pattern: "^/", format: "uri-reference", examples: ["/a"] },
              at: { $ref: "#/$defs/pos" },
              mode: { oneOf: [{ const: "insert" }, { const: "replace" }], default: "insert" },
              text: { type: ["string", "null"] },
              tags: { type: "array", items: { type: "string" }, uniqueItems: true, minItems: 1, maxItems: 5 },
              extra: { type: "object", additionalProperties: { type: "number" } },
              choice: { anyOf: [{ type: "string" }, { type: "integer" }] },
              sub: { allOf: [{ type: "object", properties: { a: { type: "string" } } }, { required: ["a"] }] },
            },
            required: ["path"],
            additionalProperties: false,
          },
        },
      ],
    },
  },
  {
    id: "gemini-video-and-file",
    clientFormat: "gemini",
    body: {
      contents: [
        {
          role: "user",
          parts: [
            { inlineData: { mimeType: "video/mp4", data: "AAAAIGZ0eXBpc29t" } },
            { inlineData: { mimeType: "text/plain", data: "aGVsbG8=" } },
            { inlineData: { mimeType: "image/webp", data: "UklGRiQAAABXRUJQVlA4IBgAAAAwAQCdASoBAAEAAwA0JaQAA3AA/vuUAAA=" } },
            { text: "What are these?" },
          ],
        },
      ],
    },
  },
  {
    id: "chat-odd-history",
    clientFormat: "openai-chat",
    body: {
      model: "m",
      messages: [
        { role: "system", content: "Be brief.", name: "policy" },
        { role: "user", content: "Do something bad." },
        { role: "assistant", content: null, refusal: "I can't help with that." },
        { role: "developer", content: "Stay polite." },
        { role: "user", content: "Then read a.txt and b.txt." },
        {
          role: "assistant",
          name: "helper",
          content: "",
          tool_calls: [
            { id: "call_x", type: "function", function: { name: "read", arguments: "{\"path\": \"a.txt\"" } },
            { id: "call_y", type: "function", function: { name: "read", arguments: "[1, 2]" } },
            { id: "call_z", type: "function", function: { name: "read", arguments: "\"b.txt\"" } },
          ],
        },
        { role: "tool", tool_call_id: "call_x", content: "[1, 2, 3]" },
        { role: "tool", tool_call_id: "call_y", content: '{"ok": true}' },
        { role: "tool", tool_call_id: "call_z", content: "42" },
      ],
      tools: [{ type: "function", function: { name: "read", parameters: { type: "object", properties: { path: { type: "string" } } } } }],
    },
  },
  {
    id: "responses-odd-history",
    clientFormat: "openai-responses",
    body: {
      model: "m",
      input: [
        { role: "user", content: [{ type: "input_text", text: "Hi" }] },
        { type: "reasoning", summary: [{ type: "summary_text", text: "A greeting." }] },
        { role: "assistant", content: [{ type: "input_text", text: "Hello (as input_text)." }] },
        { type: "item_reference", id: "msg_old" },
        { type: "function_call", call_id: "call_f", name: "read", arguments: "{}" },
        { type: "function_call_output", call_id: "call_f", output: [{ type: "input_text", text: "file text" }, { type: "input_file", filename: "a.pdf", file_data: `data:application/pdf;base64,${PDF}` }] },
        { role: "user", content: "Thanks." },
      ],
      tools: [{ type: "function", name: "read", parameters: { type: "object", properties: {} }, strict: false }],
    },
  },
  {
    id: "anthropic-citations-and-misc-blocks",
    clientFormat: "anthropic-messages",
    body: {
      model: "m",
      max_tokens: 200,
      messages: [
        { role: "user", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: "The sky is blue." }, citations: { enabled: true } }, { type: "text", text: "Color?" }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Blue", citations: [{ type: "char_location", cited_text: "The sky is blue.", document_index: 0, document_title: null, start_char_index: 0, end_char_index: 16 }] },
            { type: "text", text: "." },
          ],
        },
        { role: "user", content: [{ type: "text", text: "Sure?" }, { type: "image", source: { type: "url", url: "https://example.com/sky.png" } }] },
      ],
    },
  },
  {
    id: "gemini-odd-history",
    clientFormat: "gemini",
    body: {
      systemInstruction: { role: "user", parts: [{ text: "Be brief." }, { text: "Be kind." }] },
      contents: [
        { role: "user", parts: [{ text: "Read a.txt" }] },
        { role: "model", parts: [{ functionCall: { id: "fc1", name: "read", args: { path: "a.txt" } } }] },
        {
          role: "user",
          parts: [
            { functionResponse: { id: "fc1", name: "read", response: { output: "text" }, parts: [{ inlineData: { mimeType: "image/png", data: PNG } }] } },
          ],
        },
        { parts: [{ text: "Thanks (no role)." }] },
      ],
      tools: [{ functionDeclarations: [{ name: "read", parameters: { type: "OBJECT", properties: { path: { type: "STRING" } } } }] }],
    },
  },
];

