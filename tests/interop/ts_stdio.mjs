// The TS SDK 2.4.0 over stdio, one side of the interop tests.
//   node ts_stdio.mjs agent v1|v2            a TS agent on stdin/stdout
//   node ts_stdio.mjs client v1|v2 CMD...    a TS client driving CMD, printing
//                                            one JSON line of what it saw
// v1 is "@agentclientprotocol/sdk", v2 "@agentclientprotocol/sdk/experimental/v2".
// The agent: a prompt streams its words, asks permission for a tool call and
// reports it; a prompt saying "wait" runs until session/cancel.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as sdkV1 from "@agentclientprotocol/sdk";
import * as sdkV2 from "@agentclientprotocol/sdk/experimental/v2";

const [role, version, ...command] = process.argv.slice(2);
const sdk = version === "v2" ? sdkV2 : sdkV1;
const { agent, client, methods, ndJsonStream } = sdk;
const v2 = version === "v2";
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const info = (name) => ({ name, version: "2.4.0" });

function runAgent() {
  let sessions = 0;
  let messages = 0;
  const cancelled = new Set();
  const chunk = (sessionId, text, messageId) => ({
    sessionId,
    update: v2
      ? { sessionUpdate: "agent_message_chunk", messageId, content: { type: "text", text } }
      : { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
  const state = (sessionId, state, stopReason) => ({
    sessionId,
    update: { sessionUpdate: "state_update", state, ...(stopReason ? { stopReason } : {}) },
  });
  const app = agent(info("ts-stdio-agent"))
    .onRequest(methods.agent.initialize, ({ params }) =>
      v2
        ? { protocolVersion: 2, info: info("ts-stdio-agent"), capabilities: {} }
        : { protocolVersion: 1, agentCapabilities: {}, agentInfo: info("ts-stdio-agent") },
    )
    .onRequest(methods.agent.session.new, () => {
      sessions += 1;
      return { sessionId: `ts-session-${sessions}` };
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      cancelled.add(params.sessionId);
    })
    .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
      const { sessionId } = params;
      cancelled.delete(sessionId);
      messages += 1;
      const messageId = `ts-message-${messages}`;
      const words = params.prompt.map((b) => b.text ?? "").join(" ").split(/\s+/).filter(Boolean);
      const turn = async () => {
        if (v2) await client.notify(methods.client.session.update, state(sessionId, "running"));
        if (words.includes("wait")) {
          while (!cancelled.has(sessionId)) await sleep(20);
          return "cancelled";
        }
        for (const word of words) {
          await client.notify(methods.client.session.update, chunk(sessionId, `${word} `, messageId));
        }
        const options = [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ];
        let answer;
        if (v2) {
          answer = await client.request(methods.client.session.requestPermission, {
            sessionId,
            title: "Count the words",
            options,
          });
        } else {
          await client.notify(methods.client.session.update, {
            sessionId,
            update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Count the words", kind: "other" },
          });
          answer = await client.request(methods.client.session.requestPermission, {
            sessionId,
            toolCall: { toolCallId: "t1" },
            options,
          });
        }
        const allowed = answer.outcome.outcome === "selected" && answer.outcome.optionId === "allow";
        await client.notify(methods.client.session.update, chunk(sessionId, allowed ? "allowed" : "rejected", messageId));
        return "end_turn";
      };
      if (!v2) return { stopReason: await turn() };
      // v2: the response names the message; the turn's end is an idle state update
      turn().then((stopReason) =>
        client.notify(methods.client.session.update, state(sessionId, "idle", stopReason)),
      );
      return { messageId };
    });
  app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
}

async function runClient() {
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const updates = [];
  const permissions = [];
  const idle = new Map();
  const app = client(info("ts-stdio-client"))
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params.update.sessionUpdate);
      if (params.update.sessionUpdate === "state_update" && params.update.state === "idle") {
        idle.get(params.sessionId)?.(params.update.stopReason ?? null);
      }
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      permissions.push(v2 ? params.title : params.toolCall.toolCallId);
      const option = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });
  const ended = (sessionId) => new Promise((resolve) => idle.set(sessionId, resolve));
  const result = await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(
      methods.agent.initialize,
      v2 ? { protocolVersion: 2, info: info("ts-stdio-client") } : { protocolVersion: 1 },
    );
    const session = await ctx.request(
      methods.agent.session.new,
      v2 ? { cwd: process.cwd() } : { cwd: process.cwd(), mcpServers: [] },
    );
    const sessionId = session.sessionId;
    const turn = async (text, cancel) => {
      const done = ended(sessionId);
      const reply = ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text }],
      });
      if (cancel) {
        await sleep(300);
        await ctx.notify(methods.agent.session.cancel, { sessionId });
      }
      const answer = await reply;
      return v2 ? { messageId: typeof answer.messageId, stopReason: await done } : answer;
    };
    const first = await turn("hello world", false);
    const second = await turn("please wait", true);
    return {
      protocolVersion: init.protocolVersion,
      agent: (v2 ? init.info : init.agentInfo)?.name ?? null,
      first,
      second,
      updates,
      permissions,
    };
  });
  child.stdin.end();
  console.log(JSON.stringify(result));
  process.exit(0);
}

if (role === "agent") runAgent();
else await runClient();
