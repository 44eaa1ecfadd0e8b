"""The OpenAI-compatible teacher: any chat-completions endpoint (vLLM with Qwen3-32B or
Gemma-4-31B-it in the paper profile; `transformers serve` with SmolLM2-135M on a CPU) writes the
user turns from the chain and the live sampling context and plays the assistant with the offered
tool schemas.

    teacher = OpenAITeacher(base_url="http://127.0.0.1:8000/v1", model="Qwen/Qwen3-32B")
    outcome = await run_conversation(script, teacher, env)

The model's answers are never trusted: tool calls come from `tool_calls` or, failing that, from
`<tool_call>` blocks in the text (`prove.calls`, the parser the reward uses too); malformed arguments go to the hub
as they are and come back as errors for the state machine to recover from; transport errors and
empty answers raise `TeacherError`, which the machine turns into a rejection.
"""

from __future__ import annotations

import json
from typing import Any

from prove.calls import parse_tool_calls
from prove.synth import phrasing as P
from prove.synth.intents import PLACEHOLDER, intents_of, tool_intents
from prove.synth.machine import Action, Conversation, Infeasible, TeacherError
from prove.synth.records import derived_rng
from prove.synth.sampling import param_source

__all__ = ["OpenAITeacher", "persona_lines"]

_USER_SYSTEM = (
    "You write the USER's next message in a conversation between a user and an AI assistant that "
    "has tools. You are one person from the first message to the last: speak as 'I' about your own "
    "things, never announce who you are again and never become someone else mid-conversation. "
    "Write one or two natural sentences, as a person using the app talks: say what you want, not "
    "what a function does, and never reuse the wording of a tool description. Name things the way "
    "people do, by title, name, date or amount ('my Lisbon booking', 'the $40 refund'); write a raw "
    "id only where a person has one at hand (an order number, a booking reference), and never name "
    "an item by a database field ('the one whose zone is ...'). Mention the concrete values the "
    "assistant will need, taken only from the facts given; refer to something from earlier only if "
    "the assistant's replies showed it. When you ask for two things, join them the way people do, by "
    "condition, purpose or consequence ('if it's under $2000, book it'), and give a reason where a "
    "person would. Vary how you start: no 'Can you' or 'Could you' every time, no 'Great, thanks' "
    "as a habit. Reply with the message text only."
)

_REPLY_RULE = (
    "When you answer the user in text (not a tool call), write one to three plain sentences that say "
    "what you found or did and name the items by what people know them by (a name, title, date or "
    "amount, e.g. 'You have three accounts: Everyday ($1,240.50), Savings and Travel'), never a "
    "key: value dump; show every item the user may want to refer to next."
)
"""Added to the assistant's system message in the teacher's own requests only (the data's system
message stays the one `phrasing.system_prompt` writes)."""


def persona_lines(persona: P.Persona, motive: str | None) -> list[str]:
    """The user prompt's lines on who is talking, the same in every turn of a conversation."""
    how = ", ".join(("brief" if persona.brief else "chatty", "polite" if persona.polite else "curt"))
    line = f"You are {persona.name}" if persona.name else "You are one user of this app"
    line += f"; you write {how}"
    if persona.typos:
        line += ", with a typo now and then"
    out = [line + "."]
    if motive:
        out.append(f"If it fits, give this reason once, in your own words: {motive}")
    return out


class OpenAITeacher:
    """Teacher behind any OpenAI-compatible endpoint; greedy and seeded for reproducibility."""

    name = "openai"

    def __init__(self, base_url: str, model: str, *, api_key: str = "EMPTY", max_tokens: int = 256,
                 temperature: float = 0.0, seed: int = 0, timeout: float = 120.0,
                 client: Any = None, chat_template_kwargs: dict[str, Any] | None = None) -> None:
        self.base_url, self.model = base_url, model
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.max_tokens, self.temperature, self.seed = max_tokens, temperature, seed
        if client is None:
            import openai

            client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout,
                                        max_retries=1)
        self.client = client
        self.requests = 0

    def describe(self) -> dict[str, Any]:
        out = {"name": self.name, "model": self.model, "temperature": self.temperature,
               "max_tokens": self.max_tokens}
        if self.chat_template_kwargs:
            out["chat_template_kwargs"] = dict(self.chat_template_kwargs)
        return out

    async def prepare(self, convo: Conversation) -> None:
        rng = derived_rng("persona", convo.script.example_id, convo.script.seed)
        convo.scratch["persona"] = P.draw_persona(rng)
        found = intents_of(convo.script.servers[0]) if convo.script.servers else None
        turns = convo.script.turns
        first = [convo.script.chain.tools[s] for s in turns[0].steps] if turns else []
        fitting = found.motives_for(first) if found is not None else ()  # declared for the first turn's requests
        convo.scratch["motive"] = rng.choice(fitting) if fitting else None
        for k, turn in enumerate(convo.script.turns):
            if turn.kind == "clarify":
                convo.scratch["withheld"] = self._withhold(convo, turn.steps[0], k)

    def _withhold(self, convo: Conversation, step: int, k: int) -> dict[str, Any]:
        spec = convo.env.registry.tool(convo.script.chain.tools[step])
        feeds = convo.script.chain.feeds(step)
        for param in list(spec.sensitive) + list(spec.required):
            if param in spec.required and param not in feeds:
                vals = [v for v, _ in convo.ctx.candidates(param_source(spec, param))]
                if vals:
                    value = vals[convo.rng.randrange(min(len(vals), 10))]
                    out = {"turn": k, "tool": spec.name, "param": param, "value": value,
                           "supplied_in_turn": k + 1}
                    for pert in convo.script.perturbations:
                        if pert.get("type") == "withheld_information":
                            pert.update(out)
                    return out
        raise Infeasible(f"nothing the user supplies to withhold in {spec.name}")

    async def _chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
                    ) -> Any:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "max_tokens": self.max_tokens, "temperature": self.temperature,
                                  "seed": self.seed}
        if tools:
            kwargs["tools"] = tools
        if self.chat_template_kwargs:  # the profile's thinking mode (Qwen3: enable_thinking)
            kwargs["extra_body"] = {"chat_template_kwargs": self.chat_template_kwargs}
        self.requests += 1
        try:
            resp = await self.client.chat.completions.create(**kwargs)
        except Exception as exc:  # any transport/API failure becomes a rejection, not a crash
            raise TeacherError(f"{type(exc).__name__}: {exc}") from None
        if not getattr(resp, "choices", None):
            raise TeacherError("the endpoint returned no choices")
        return resp.choices[0].message

    async def user_message(self, convo: Conversation, k: int) -> str:
        turn = convo.script.turns[k]
        withheld = convo.scratch.get("withheld")
        if turn.supplies and withheld:
            return P.supply_text(withheld["param"], withheld["value"], convo.rng)
        reg = convo.env.registry
        lines = []
        if turn.kind == "abstain":
            topic = turn.off_topic or {}
            servers = ", ".join(P.domain_of(reg.server(s)) for s in convo.script.servers)
            if topic.get("source") == "tool":
                other = reg.tool(topic["tool"])
                lines.append(f"Ask for something a user of another kind of app would want ({_wants(other)}). "
                             f"The assistant's tools only cover: {servers}, so this request must be "
                             "outside them.")
            else:
                return str(topic.get("text") or P.GENERIC_OFF_TOPIC[0])
        else:
            steps = turn.steps
            persona = convo.scratch.get("persona")
            if persona is not None:
                lines += persona_lines(persona, convo.scratch.get("motive") if k == 0 else None)
            lines.append("The message must ask the assistant for the following, in order:")
            for s in steps:
                spec = reg.tool(convo.script.chain.tools[s])
                lines.append(f"- {_wants(spec)} (values it needs: {', '.join(spec.required) or 'none'})")
            lines.append("Facts that exist in the system (use only these values):")
            lines += [f"  {line}" for line in convo.context_lines()]
            if withheld and turn.kind == "clarify":
                lines.append(f"Do NOT mention the {withheld['param']}; the assistant should ask for it.")
            if k > 0:
                lines.append("This is a follow-up; you may refer to earlier results.")
        history = [m for m in convo.messages if m["role"] in ("user", "assistant") and m.get("content")]
        msgs = [{"role": "system", "content": _USER_SYSTEM}]
        if history:
            recap = "\n".join(f"{m['role']}: {m['content'][:300]}" for m in history[-4:])
            lines.append("Conversation so far:\n" + recap)
        msgs.append({"role": "user", "content": "\n".join(lines)})
        msg = await self._chat(msgs)
        text = (getattr(msg, "content", None) or "").strip().strip('"').strip()
        if not text:
            raise TeacherError("empty user turn")
        return text[:1000]

    async def assistant(self, convo: Conversation, k: int, hint: str | None = None) -> Action:
        messages = [_plain(m) for m in convo.messages]
        if messages and messages[0]["role"] == "system":
            messages[0] = {**messages[0], "content": messages[0]["content"] + "\n" + _REPLY_RULE}
        if hint:
            messages.append({"role": "system", "content": hint})
        msg = await self._chat(messages, convo.script.tools)
        calls = []
        for tc in getattr(msg, "tool_calls", None) or []:
            fn = getattr(tc, "function", None)
            raw = getattr(fn, "arguments", "") or ""
            try:
                args: Any = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
            except ValueError:
                args = raw
            calls.append({"name": str(getattr(fn, "name", "")), "arguments": args})
        text = getattr(msg, "content", None) or ""
        if not calls and text:
            calls = [{"name": c.name, "arguments": c.arguments} for c in parse_tool_calls(text)
                     if c.name]
        if calls:
            return Action(calls=calls, note="model")
        return Action(text=text, note="model")

    async def alternative(self, convo: Conversation, k: int, failed: dict[str, Any],
                          options: list[str]) -> Action | None:
        hint = (f"The tool {failed['name']} keeps failing ({str(failed.get('error'))[:200]}). "
                f"Use one of these tools instead: {', '.join(options)}.")
        action = await self.assistant(convo, k, hint)
        return action if action.calls else None


def _wants(spec: Any) -> str:
    """What a user wants from a tool, as its app's users put it (two of its written requests, values
    shown as <param>); the description only where the server has no intents yet."""
    written = tool_intents(spec.server, spec.name)
    if written is None:
        return spec.description
    shown = [PLACEHOLDER.sub(r"<\1>", a) for a in written.ask[:2]]
    return "as users put it: " + " / ".join(f'"{a}"' for a in shown)


def _plain(message: dict[str, Any]) -> dict[str, Any]:
    """A message as the chat API takes it (drop our extra keys, stringify content)."""
    out = {"role": message["role"], "content": message.get("content") or ""}
    if message.get("tool_calls"):
        out["tool_calls"] = message["tool_calls"]
    if message["role"] == "tool":
        out["tool_call_id"] = message.get("tool_call_id", "")
    return out
