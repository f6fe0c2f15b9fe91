// The TS SDK 2.4.0's server (AcpServer + its Node HTTP handler and WebSocket
// upgrade handler, the latter over the `ws` package's WebSocketServer, which the
// SDK takes but does not ship) serving a TS agent on 127.0.0.1, an ephemeral
// port printed as the first line of stdout.
// A prompt streams its words, asks permission for a tool call, reports it;
// a prompt saying "slow" waits between words, one saying "wait" runs until
// session/cancel.
import { createServer } from "node:http";
import { agent, methods } from "@agentclientprotocol/sdk";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";
import { WebSocketServer } from "ws";

let sessions = 0;
const cancelled = new Set();

const createAgent = () =>
  agent({ name: "ts-interop-agent" })
    .onRequest(methods.agent.initialize, () => ({ protocolVersion: 1, agentCapabilities: {} }))
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
      const words = params.prompt.map((b) => b.text ?? "").join(" ").split(/\s+/).filter(Boolean);
      const slow = words.includes("slow");
      if (words.includes("wait")) {
        // runs until session/cancel, as the official Python SDK's test agent does
        while (!cancelled.has(sessionId)) await new Promise((resolve) => setTimeout(resolve, 50));
        return { stopReason: "cancelled" };
      }
      for (const word of words) {
        if (cancelled.has(sessionId)) return { stopReason: "cancelled" };
        await client.notify(methods.client.session.update, {
          sessionId,
          update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `${word} ` } },
        });
        if (slow) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      if (cancelled.has(sessionId)) return { stopReason: "cancelled" };
      await client.notify(methods.client.session.update, {
        sessionId,
        update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Count the words", kind: "other" },
      });
      const answer = await client.request(methods.client.session.requestPermission, {
        sessionId,
        toolCall: { toolCallId: "t1" },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      });
      const allowed = answer.outcome.outcome === "selected" && answer.outcome.optionId === "allow";
      await client.notify(methods.client.session.update, {
        sessionId,
        update: { sessionUpdate: "tool_call_update", toolCallId: "t1", status: allowed ? "completed" : "failed" },
      });
      return { stopReason: "end_turn" };
    });

const server = new AcpServer({ createAgent });
const http = createServer(createNodeHttpHandler(server));
http.on("upgrade", createNodeWebSocketUpgradeHandler(server, new WebSocketServer({ noServer: true })));
http.listen(0, "127.0.0.1", () => {
  console.log(http.address().port);
});
