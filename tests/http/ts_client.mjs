// The TS SDK 2.4.0's Streamable HTTP or WebSocket client runs the scenario
// against URL: initialize, session/new, a prompt with updates and a
// permission request, a cancel.  Prints one JSON line of what it saw.
// node ts_client.mjs http|ws URL   (ws: node --experimental-websocket on Node 20)
import { client, methods } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";

const [mode, url] = process.argv.slice(2);
const stream = mode === "ws" ? createWebSocketStream(url) : createHttpStream(url);
const updates = [];
let permissions = 0;

const app = client({ name: "ts-interop-client" })
  .onNotification(methods.client.session.update, ({ params }) => {
    updates.push(params);
  })
  .onRequest(methods.client.session.requestPermission, ({ params }) => {
    permissions += 1;
    const option = params.options.find((o) => o.kind === "allow_once");
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  });

const text = (sessionId) =>
  updates
    .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk")
    .map((u) => u.update.content.text)
    .join("");

const result = await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(methods.agent.initialize, { protocolVersion: 1 });
  const session = await ctx.request(methods.agent.session.new, { cwd: "/", mcpServers: [] });
  const sessionId = session.sessionId;
  const first = await ctx.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "hello from typescript" }],
  });
  const slow = ctx.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "slow a b c d e f" }],
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await ctx.notify(methods.agent.session.cancel, { sessionId });
  const second = await slow;
  return {
    protocolVersion: init.protocolVersion,
    sessionId,
    first: first.stopReason,
    second: second.stopReason,
    text: text(sessionId),
    permissions,
  };
});
console.log(JSON.stringify(result));
process.exit(0);
