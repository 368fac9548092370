"""Drives yieldshell with the official MCP Python SDK's client and its elicitation callback.

Run by tests/integration/sdk_client.rs with the interpreter of a virtual environment that
holds the SDK (.ci/run makes it): two `exec` calls refused by a blocked side effect are put
to the "person" (the callback), who accepts the first and declines the second. Prints one
JSON object with what the callback was asked and what the calls answered; exits non-zero
when something is not as expected.
"""

import argparse
import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main(binary: str, cwd: str) -> dict:
    questions = []
    answers = iter(["accept", "decline"])

    async def elicit(_context, params: types.ElicitRequestParams):
        questions.append(
            {
                "message": params.message,
                "schema": params.requestedSchema,
                "mode": getattr(params, "mode", None),
            }
        )
        action = next(answers)
        content = {"remember": False} if action == "accept" else None
        return types.ElicitResult(action=action, content=content)

    server = StdioServerParameters(
        command=binary,
        env={
            "PATH": "/usr/bin:/bin",
            "YIELDSHELL_APPROVALS": "ask",
            "MCP_YIELDSHELL_BLOCKED_SIDE_EFFECTS": "RUNS_INLINE_CODE",
            "YIELDSHELL_DEFAULT_CWD": cwd,
        },
    )
    results = []
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicit) as session:
            init = await session.initialize()
            for word in ["sdk-accepted", "sdk-declined"]:
                result = await session.call_tool(
                    "exec",
                    {"command": f"echo {word}", "side_effects": ["RUNS_INLINE_CODE"]},
                )
                results.append(
                    {
                        "isError": result.isError,
                        "text": "".join(
                            c.text for c in result.content if isinstance(c, types.TextContent)
                        ),
                    }
                )
    return {
        "protocolVersion": init.protocolVersion,
        "questions": questions,
        "results": results,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--yieldshell", required=True)
    parser.add_argument("--cwd", required=True)
    args = parser.parse_args()
    report = asyncio.run(main(args.yieldshell, args.cwd))
    print(json.dumps(report))
    ok = (
        len(report["questions"]) == 2
        and not report["results"][0]["isError"]
        and "sdk-accepted" in report["results"][0]["text"]
        and report["results"][1]["isError"]
        and "Declined by the person" in report["results"][1]["text"]
    )
    sys.exit(0 if ok else 1)
