// The TypeScript SDK's example client, on the published @agentclientprotocol/sdk
// (2.4.0; the package ships no examples): what the SDK repository's
// src/examples/client.ts does, written against the package's API.
//   node ts_sdk_example_client.mjs AGENT_CMD ...
// As the example: fs read and write advertised, fs/read_text_file answered with
// mock content, fs/write_text_file logged and answered {} (nothing written), the
// updates printed, one prompt ("Hello, agent!"), then the agent killed and exit 0.
// Two changes, both of its I/O: the agent is the command given (the example runs
// `npx tsx agent.ts`), and a permission is answered with the first option offered
// (the example asks on stdin; the check has no user: as if one typed 1).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const [command, ...args] = process.argv.slice(2);
const agent = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const stream = ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

function show(update) {
  switch (update.sessionUpdate) {
    case "agent_message_chunk":
      console.log(update.content.type === "text" ? update.content.text : `[${update.content.type}]`);
      break;
    case "tool_call":
      console.log(`tool ${update.title} (${update.status})`);
      break;
    case "tool_call_update":
      console.log(`tool ${update.toolCallId} updated: ${update.status}`);
      break;
    default:
      console.log(`[${update.sessionUpdate}]`);
  }
}

try {
  const response = await client({ name: "example-client" })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      console.log(`permission requested: ${params.toolCall.title}`);
      params.options.forEach((o, i) => console.log(`  ${i + 1}. ${o.name} (${o.kind})`));
      return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      console.error("[client] write text file:", JSON.stringify(params));
      return {};
    })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      console.error("[client] read text file:", JSON.stringify(params));
      return { content: "Mock file content" };
    })
    .connectWith(stream, async (ctx) => {
      const init = await ctx.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
      });
      console.log(`connected (protocol v${init.protocolVersion})`);
      return ctx.buildSession(process.cwd()).withSession(async (session) => {
        session.prompt("Hello, agent!");
        for (;;) {
          const message = await session.nextUpdate();
          if (message.kind === "stop") return message.response;
          show(message.notification.update);
        }
      });
    });
  console.log(`agent completed with: ${response.stopReason}`);
} catch (error) {
  console.error("[client] error:", error);
} finally {
  agent.kill();
  process.exit(0);
}
