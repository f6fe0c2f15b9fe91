// The TS SDK 2.4.0's MCP-over-ACP helpers at one end of a chain.
//   node ts_mcp.mjs agent           a TS agent advertising mcpCapabilities.acp: on each
//                                   prompt it lists and calls (McpOverAcpCaller) every
//                                   tool of every "type": "acp" server with {text: PROMPT}
//                                   and says "SERVER/TOOL: TEXT"
//   node ts_mcp.mjs client CMD...   a TS client offering one server (McpOverAcpProvider,
//                                   tool "shout") to CMD; one prompt; prints a JSON line
//                                   of the agent's text
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as sdk from "@agentclientprotocol/sdk/unstable";

const { agent, client, methods, ndJsonStream, McpOverAcpCaller, McpOverAcpProvider, isMcpServerAcp } = sdk;
const [role, ...command] = process.argv.slice(2);
const info = (name) => ({ name, version: "2.4.0" });

function runAgent() {
  const caller = new McpOverAcpCaller({ clientInfo: info("ts-mcp-agent") });
  const sessions = new Map();
  const app = agent(info("ts-mcp-agent"))
    .onNotification(methods.agent.mcp.message, caller.handleNotification)
    .onRequest(methods.agent.initialize, () => ({
      protocolVersion: 1,
      agentCapabilities: { mcpCapabilities: { acp: true } },
    }))
    .onRequest(methods.agent.session.new, ({ params }) => {
      const sessionId = `ts-session-${sessions.size + 1}`;
      sessions.set(sessionId, params.mcpServers.filter(isMcpServerAcp));
      return { sessionId };
    })
    .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
      const text = params.prompt.map((b) => b.text ?? "").join(" ");
      for (const server of sessions.get(params.sessionId) ?? []) {
        const listed = await caller.request(client, server.serverId, "tools/list", {});
        for (const tool of listed.result?.tools ?? []) {
          const called = await caller.request(client, server.serverId, "tools/call", {
            name: tool.name,
            arguments: { text },
          });
          const said = (called.result?.content ?? []).map((c) => c.text ?? "").join(" ");
          await client.notify(methods.client.session.update, {
            sessionId: params.sessionId,
            update: {
              sessionUpdate: "agent_message_chunk",
              content: { type: "text", text: `${server.name}/${tool.name}: ${said}\n` },
            },
          });
        }
      }
      return { stopReason: "end_turn" };
    });
  app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
}

async function runClient() {
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const said = [];
  const provider = new McpOverAcpProvider();
  const app = client(info("ts-mcp-client"))
    .onRequest(methods.client.mcp.message, provider.handleRequest)
    .onNotification(methods.client.session.update, ({ params }) => {
      if (params.update.sessionUpdate === "agent_message_chunk") said.push(params.update.content.text);
    });
  const result = await app.connectWith(stream, async (ctx) => {
    const tools = provider.registerServer(ctx, {
      name: "ts-tools",
      handler: ({ method, params }) => {
        // MCP 2026-07-28 results: a resultType, and cache hints on a listing
        if (method === "tools/list") {
          return {
            result: {
              resultType: "complete",
              ttlMs: 0,
              cacheScope: "private",
              tools: [
                {
                  name: "shout",
                  description: "Upper-case a text.",
                  inputSchema: { type: "object", properties: { text: { type: "string" } } },
                },
              ],
            },
          };
        }
        if (method === "tools/call") {
          const text = String(params?.arguments?.text ?? "");
          const content = [{ type: "text", text: text.toUpperCase() }];
          return { result: { resultType: "complete", content, isError: false } };
        }
        return { error: { code: -32601, message: `Method not found: ${method}` } };
      },
    });
    await ctx.request(methods.agent.initialize, { protocolVersion: 1 });
    const session = await ctx.request(methods.agent.session.new, {
      cwd: process.cwd(),
      mcpServers: [tools.declaration],
    });
    const answer = await ctx.request(methods.agent.session.prompt, {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "hello there" }],
    });
    return { stopReason: answer.stopReason, said };
  });
  process.stdout.write(JSON.stringify(result) + "\n");
  child.stdin.end();
  process.exit(0);
}

if (role === "agent") runAgent();
else await runClient();
