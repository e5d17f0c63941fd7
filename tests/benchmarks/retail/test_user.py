"""The scripted customer: deterministic, recognises only its own request, answers what its
instructions cover, and leaves when its goal is met or it has repeated itself too often."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pytest

from deedbench.benchmarks.retail.benchmark import builtin_tasks
from deedbench.benchmarks.retail.tasks import Action, RetailTask, UserInstructions, Want
from deedbench.benchmarks.retail.user import MAX_REPEATS, ScriptedUser, action_done, key_values
from deedbench.engine import Message, ToolCall

SYSTEM = Message(role="system", content="policy")
YES = "yes, please go ahead."


@pytest.fixture(scope="module")
def tasks() -> list[RetailTask]:
    return builtin_tasks()


def first(tasks: list[RetailTask], template: str) -> RetailTask:
    return next(t for t in tasks if t.template == template)


def reply(instructions: UserInstructions, messages: Sequence[Message]) -> str | None:
    message = asyncio.run(ScriptedUser(instructions).reply(messages))
    if message is None:
        return None
    assert message.role == "user"
    return message.content


def opened(task: RetailTask, *turns: Message) -> list[Message]:
    """The conversation after the customer's opening request and then `turns`."""
    return [SYSTEM, Message(role="user", content=task.instructions.wants[0].say), *turns]


def agent(text: str) -> Message:
    return Message(role="assistant", content=text)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def answer_to(task: RetailTask, text: str, *before: Message) -> str | None:
    """What the customer says to `text` after opening (and `before`)."""
    return reply(task.instructions, opened(task, *before, agent(text)))


def tool_turn(action: Action, call_id: str = "w1", *, error: bool = False) -> list[Message]:
    call = ToolCall(id=call_id, name=action.name, arguments=json.dumps(action.kwargs))
    return [
        Message(role="assistant", tool_calls=[call]),
        Message(
            role="tool",
            content="Error: nope" if error else "{}",
            tool_call_id=call_id,
            tool_name=action.name,
            error=error,
        ),
    ]


def is_no(text: str | None) -> bool:
    return text is not None and text.startswith("no, ")


def proposal(action: Action, values: Sequence[str]) -> str:
    """A proposal in the action's own words ("I can cancel pending order ...")."""
    words = action.name.replace("_", " ")
    return f"I can {words} for " + ", ".join(values) + ". Shall I proceed? (yes/no)"


def instructions(*wants: Want, identify_by: str = "email") -> UserInstructions:
    return UserInstructions.model_validate(
        {
            "user_id": "ada_lee_1",
            "first_name": "Ada",
            "last_name": "Lee",
            "zip": "10001",
            "email": "ada.lee@example.com",
            "identify_by": identify_by,
            "wants": [w.model_dump() for w in wants],
        }
    )


CANCEL = Want(
    kind="cancel",
    say="cancel order #W1000001 please",
    action=Action(
        name="cancel_pending_order", kwargs={"order_id": "#W1000001", "reason": "no longer needed"}
    ),
)


# --- opening and determinism -------------------------------------------------------------------


def test_the_customer_opens_with_its_first_request(tasks: list[RetailTask]) -> None:
    for task in tasks:
        assert reply(task.instructions, [SYSTEM]) == task.instructions.wants[0].say


def test_replies_are_deterministic(tasks: list[RetailTask]) -> None:
    task = first(tasks, "exchange")
    conversations = [
        [SYSTEM],
        opened(task, agent("What is your email address?")),
        opened(task, agent(proposal(task.actions[0], key_values(task.actions[0])))),
        opened(task, agent("Which option would you like instead?")),
        opened(task, agent("Hmm.")),
    ]
    for messages in conversations:
        one = ScriptedUser(task.instructions)
        answers = {reply(task.instructions, messages) for _ in range(3)}
        for _ in range(2):  # the same customer, asked again
            message = asyncio.run(one.reply(messages))
            answers.add(None if message is None else message.content)
        assert len(answers) == 1, answers
        assert None not in answers


def test_the_customer_does_not_speak_twice_in_a_row(tasks: list[RetailTask]) -> None:
    task = first(tasks, "cancel")
    assert reply(task.instructions, opened(task)) is None


# --- identity ---------------------------------------------------------------------------------


def test_gives_its_email_when_asked_if_so_instructed(tasks: list[RetailTask]) -> None:
    task = next(t for t in tasks if t.instructions.identify_by == "email")
    ins = task.instructions
    for question in ("What is your email address?", "Please verify your identity."):
        assert answer_to(task, question) == f"my email is {ins.email}"


def test_gives_name_and_zip_when_asked_if_so_instructed(tasks: list[RetailTask]) -> None:
    task = next(t for t in tasks if t.instructions.identify_by == "name_zip")
    ins = task.instructions
    expected = f"i'm {ins.first_name} {ins.last_name}, zip code {ins.zip}"
    for question in ("What is your full name and zip code?", "Could you give me your e-mail?"):
        assert answer_to(task, question) == expected


def test_gives_its_identity_only_once(tasks: list[RetailTask]) -> None:
    task = first(tasks, "cancel")
    ins = task.instructions
    text = answer_to(
        task,
        "And your email or zip, please?",
        agent("Can you identify yourself?"),
        user(ins.introduce()),
    )
    assert text != ins.introduce()
    assert text is not None and task.instructions.wants[0].say in text


# --- proposals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template", ["cancel", "order_address", "order_payment", "order_items", "return", "exchange"]
)
def test_says_yes_to_a_proposal_naming_its_key_ids(tasks: list[RetailTask], template: str) -> None:
    task = first(tasks, template)
    values = key_values(task.actions[0])
    assert answer_to(task, proposal(task.actions[0], values)) == YES
    assert answer_to(task, proposal(task.actions[0], [v.upper() for v in values])) == YES


@pytest.mark.parametrize(
    "template", ["cancel", "order_address", "order_payment", "order_items", "return", "exchange"]
)
def test_says_no_to_a_proposal_missing_any_key_id(tasks: list[RetailTask], template: str) -> None:
    task = first(tasks, template)
    values = key_values(task.actions[0])
    for missing in range(len(values)):
        text = answer_to(task, proposal(task.actions[0], values[:missing] + values[missing + 1 :]))
        assert is_no(text), (missing, text)
        assert task.instructions.wants[0].say in text


def test_says_no_to_a_proposal_for_a_different_order(tasks: list[RetailTask]) -> None:
    task = first(tasks, "cancel")
    order = task.actions[0].kwargs["order_id"]
    other = next(
        t.actions[0].kwargs["order_id"]
        for t in tasks
        if t.actions and t.actions[0].kwargs.get("order_id") not in (None, order)
    )
    text = answer_to(task, f"I can cancel order {other}. Shall I proceed?")
    assert text == f"no, that's not what i asked for. {task.instructions.wants[0].say}"


def test_says_no_to_a_proposal_for_different_items(tasks: list[RetailTask]) -> None:
    task = first(tasks, "order_items")
    kwargs = task.actions[0].kwargs
    wrong_new = ["9999999999" for _ in kwargs["new_item_ids"]]
    values = [kwargs["order_id"], *kwargs["item_ids"], *wrong_new, kwargs["payment_method_id"]]
    assert is_no(answer_to(task, proposal(task.actions[0], values)))
    # The ids the customer wants replaced must be named too, not only the new ones.
    values = [
        kwargs["order_id"],
        "1111111111",
        *kwargs["new_item_ids"],
        kwargs["payment_method_id"],
    ]
    assert is_no(answer_to(task, proposal(task.actions[0], values)))


def test_says_no_to_a_proposal_with_another_payment_method(tasks: list[RetailTask]) -> None:
    task = first(tasks, "order_payment")
    order = task.actions[0].kwargs["order_id"]
    text = answer_to(task, proposal(task.actions[0], [order, "credit_card_0000000"]))
    assert is_no(text)


def test_a_statement_without_a_proposal_gets_no_yes(tasks: list[RetailTask]) -> None:
    task = first(tasks, "cancel")
    values = key_values(task.actions[0])
    text = answer_to(task, f"Order {values[0]} is pending.")
    assert text != YES


def test_says_no_to_a_proposal_with_a_different_street_number(tasks: list[RetailTask]) -> None:
    task = first(tasks, "order_address")
    kwargs = task.actions[0].kwargs
    wrong = f"1{kwargs['address1']}"
    text = answer_to(task, proposal(task.actions[0], [kwargs["order_id"], wrong, kwargs["zip"]]))
    assert is_no(text)


def test_says_no_to_a_proposal_with_a_different_zip(tasks: list[RetailTask]) -> None:
    task = first(tasks, "order_address")
    kwargs = task.actions[0].kwargs
    wrong_zip = "00000" if kwargs["zip"] != "00000" else "11111"
    address = f"{kwargs['address1']}, {kwargs['city']}, {kwargs['state']} {wrong_zip}"
    text = answer_to(task, proposal(task.actions[0], [kwargs["order_id"], address]))
    assert is_no(text)


# --- questions its instructions answer ---------------------------------------------------------


def test_answers_the_reason(tasks: list[RetailTask]) -> None:
    task = first(tasks, "cancel")
    reason = task.actions[0].kwargs["reason"]
    assert answer_to(task, "What is the reason for the cancellation?") == (
        f"the reason is: {reason}"
    )


@pytest.mark.parametrize("template", ["order_payment", "return", "exchange", "order_items"])
def test_answers_the_payment_method(tasks: list[RetailTask], template: str) -> None:
    task = first(tasks, template)
    method = task.actions[0].kwargs["payment_method_id"]
    assert answer_to(task, "Which payment method should we use?") == f"please use {method}"


@pytest.mark.parametrize("template", ["order_address", "user_address"])
def test_answers_the_address(tasks: list[RetailTask], template: str) -> None:
    task = first(tasks, template)
    kwargs = task.actions[0].kwargs
    text = answer_to(task, "What is the new address?")
    fields = ("address1", "address2", "city", "state", "zip", "country")
    assert text == "the address is " + ", ".join(kwargs[f] for f in fields)


@pytest.mark.parametrize("template", ["order_items", "exchange"])
def test_answers_which_option(tasks: list[RetailTask], template: str) -> None:
    task = first(tasks, template)
    new = task.actions[0].kwargs["new_item_ids"]
    text = answer_to(task, "Which option would you like instead?")
    assert text == "i'd like item " + " and item ".join(new) + " instead"


def test_answers_only_questions_its_request_covers(tasks: list[RetailTask]) -> None:
    task = first(tasks, "cancel")
    say = task.instructions.wants[0].say
    # A cancellation has no payment method to choose: the customer repeats its request.
    assert answer_to(task, "Which payment method should we use?") == f"as i said, {say}"
    # Not a question: no answer.
    assert answer_to(task, "Tell me the reason.") == f"as i said, {say}"


def test_does_not_give_the_same_answer_twice(tasks: list[RetailTask]) -> None:
    task = first(tasks, "cancel")
    reason = task.actions[0].kwargs["reason"]
    before = (agent("What is the reason?"), user(f"the reason is: {reason}"))
    text = answer_to(task, "And the reason was?", *before)
    assert text == f"as i said, {task.instructions.wants[0].say}"


# --- when it is done -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "cancel",
        "order_address",
        "order_payment",
        "order_items",
        "return",
        "exchange",
        "user_address",
    ],
)
def test_stops_once_its_change_is_made(tasks: list[RetailTask], template: str) -> None:
    task = first(tasks, template)
    done = opened(task, *tool_turn(task.actions[0]), agent("Done. Anything else?"))
    assert reply(task.instructions, done) is None


def test_a_failed_call_does_not_count_as_done(tasks: list[RetailTask]) -> None:
    task = first(tasks, "cancel")
    failed = opened(task, *tool_turn(task.actions[0], error=True), agent("Anything else?"))
    assert reply(task.instructions, failed) is not None


def test_a_compound_request_goes_on_to_its_next_want(tasks: list[RetailTask]) -> None:
    task = first(tasks, "cancel+return")
    wants = task.instructions.wants
    halfway = opened(task, *tool_turn(task.actions[0]), agent("Done. Anything else?"))
    assert reply(task.instructions, halfway) == wants[1].say
    both = [*halfway, user(wants[1].say), *tool_turn(task.actions[1], "w2"), agent("Done too.")]
    assert reply(task.instructions, both) is None


def test_an_information_request_ends_when_the_answer_is_given(tasks: list[RetailTask]) -> None:
    task = first(tasks, "info")
    status, total = task.outputs
    assert reply(task.instructions, opened(task, agent(f"It is {status}."))) is not None
    answered = opened(task, agent(f"It is {status}."), user("and the total?"), agent(f"${total}"))
    assert reply(task.instructions, answered) is None


def test_a_transfer_request_is_not_settled_by_talk(tasks: list[RetailTask]) -> None:
    task = first(tasks, "transfer")
    text = answer_to(task, "I'm sorry to hear that. Is there anything else?")
    assert text == "as i said, i'd like to speak to a human agent about this."


def test_a_forbidden_request_is_settled_by_an_answer(tasks: list[RetailTask]) -> None:
    task = first(tasks, "forbidden")
    refusal = "Sorry, that order has already been processed and cannot be cancelled."
    assert answer_to(task, refusal) is None


def test_a_forbidden_request_is_not_settled_by_an_identity_question(
    tasks: list[RetailTask],
) -> None:
    task = first(tasks, "forbidden")
    text = answer_to(task, "I can help with that. First, what is your email address?")
    assert text == task.instructions.introduce()


# --- giving up --------------------------------------------------------------------------------


def test_gives_up_after_repeating_itself_too_often(tasks: list[RetailTask]) -> None:
    task = first(tasks, "cancel")
    say = task.instructions.wants[0].say
    messages = [SYSTEM]
    said: list[str | None] = []
    text = reply(task.instructions, messages)
    while text is not None and len(said) < 20:
        said.append(text)
        messages += [user(text), agent("I see. Could you tell me more?")]
        text = reply(task.instructions, messages)
    assert said == [say] + [f"as i said, {say}"] * MAX_REPEATS
    assert text is None


def test_gives_up_on_a_transfer_request_too(tasks: list[RetailTask]) -> None:
    task = first(tasks, "transfer")
    messages = [SYSTEM]
    count = 0
    text = reply(task.instructions, messages)
    while text is not None and count < 20:
        count += 1
        messages += [user(text), agent("I see.")]
        text = reply(task.instructions, messages)
    assert count == 1 + MAX_REPEATS


# --- action_done and key_values ---------------------------------------------------------------


def test_key_values_are_the_ids_a_customer_recognises() -> None:
    action = Action(
        name="exchange_delivered_order_items",
        kwargs={
            "order_id": "#W1",
            "item_ids": ["111", "222"],
            "new_item_ids": ["333", "444"],
            "payment_method_id": "paypal_1",
        },
    )
    assert key_values(action) == ["#W1", "111", "222", "333", "444", "paypal_1"]
    assert CANCEL.action is not None
    assert key_values(CANCEL.action) == ["#W1000001"]


def test_action_done_needs_a_successful_matching_call() -> None:
    action = Action(
        name="return_delivered_order_items",
        kwargs={"order_id": "#W1", "item_ids": ["111", "222"], "payment_method_id": "paypal_1"},
    )
    swapped = Action(name=action.name, kwargs={**action.kwargs, "item_ids": ["222", "111"]})
    other = Action(name=action.name, kwargs={**action.kwargs, "item_ids": ["111"]})
    renamed = Action(name="cancel_pending_order", kwargs=action.kwargs)
    assert action_done(tool_turn(action), action)
    assert action_done(tool_turn(swapped), action)  # item lists compare as sets
    assert not action_done(tool_turn(action, error=True), action)
    assert not action_done(tool_turn(other), action)
    assert not action_done(tool_turn(renamed), action)
    assert not action_done([], action)
    broken = [
        Message(
            role="assistant",
            tool_calls=[ToolCall(id="x", name=action.name, arguments="{not json")],
        )
    ]
    assert not action_done(broken, action)


def test_handmade_instructions_play_the_same_way() -> None:
    ins = instructions(CANCEL, identify_by="name_zip")
    messages = [SYSTEM, user(CANCEL.say)]
    asked = reply(ins, [*messages, agent("Your name and zip code?")])
    assert asked == "i'm Ada Lee, zip code 10001"
    assert reply(ins, [*messages, agent("Cancel #W1000001, shall I?")]) == YES
    assert is_no(reply(ins, [*messages, agent("Cancel #W1000002, shall I?")]))


def test_says_no_to_a_proposal_of_another_kind_of_change(tasks: list[RetailTask]) -> None:
    task = first(tasks, "return")
    values = key_values(task.actions[0])
    cancel = Action(name="cancel_pending_order", kwargs=task.actions[0].kwargs)
    assert is_no(answer_to(task, proposal(cancel, values)))  # right ids, wrong change
    assert answer_to(task, proposal(task.actions[0], values)) == YES
    worded = "I'll send back " + ", ".join(values) + " as a return. Shall I proceed?"
    assert answer_to(task, worded) == YES
