"""The scripted customer: deterministic, recognises only its own request, answers what its
instructions cover, and leaves when its goal is met or it has repeated itself too often."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pytest

from deedbench.benchmarks.airline import AIRLINE
from deedbench.benchmarks.retail import RETAIL, builtin_tasks
from deedbench.benchmarks.servicedesk import (
    MAX_REPEATS,
    Action,
    DeskTask,
    Domain,
    ScriptedUser,
    UserInstructions,
    Want,
    action_done,
)
from deedbench.records import Message, ToolCall

SYSTEM = Message(role="system", content="policy")
YES = "yes, please go ahead."


@pytest.fixture(scope="module")
def tasks() -> list[DeskTask]:
    return builtin_tasks()


def first(tasks: list[DeskTask], template: str) -> DeskTask:
    return next(t for t in tasks if t.template == template)


def reply(
    instructions: UserInstructions, messages: Sequence[Message], domain: Domain = RETAIL
) -> str | None:
    message = asyncio.run(ScriptedUser(instructions, domain).reply(messages))
    if message is None:
        return None
    assert message.role == "user"
    return message.content


def opened(task: DeskTask, *turns: Message) -> list[Message]:
    """The conversation after the customer's opening request and then `turns`."""
    return [SYSTEM, Message(role="user", content=task.instructions.wants[0].say), *turns]


def agent(text: str) -> Message:
    return Message(role="assistant", content=text)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def answer_to(task: DeskTask, text: str, *before: Message) -> str | None:
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


def test_the_customer_opens_with_its_first_request(tasks: list[DeskTask]) -> None:
    for task in tasks:
        assert reply(task.instructions, [SYSTEM]) == task.instructions.wants[0].say


def test_replies_are_deterministic(tasks: list[DeskTask]) -> None:
    task = first(tasks, "exchange")
    conversations = [
        [SYSTEM],
        opened(task, agent("What is your email address?")),
        opened(task, agent(proposal(task.actions[0], RETAIL.keys(task.actions[0])))),
        opened(task, agent("Which option would you like instead?")),
        opened(task, agent("Hmm.")),
    ]
    for messages in conversations:
        one = ScriptedUser(task.instructions, RETAIL)
        answers = {reply(task.instructions, messages) for _ in range(3)}
        for _ in range(2):  # the same customer, asked again
            message = asyncio.run(one.reply(messages))
            answers.add(None if message is None else message.content)
        assert len(answers) == 1, answers
        assert None not in answers


def test_the_customer_does_not_speak_twice_in_a_row(tasks: list[DeskTask]) -> None:
    task = first(tasks, "cancel")
    assert reply(task.instructions, opened(task)) is None


# --- identity ---------------------------------------------------------------------------------


def test_gives_its_email_when_asked_if_so_instructed(tasks: list[DeskTask]) -> None:
    task = next(t for t in tasks if t.instructions.identify_by == "email")
    ins = task.instructions
    for question in ("What is your email address?", "Please verify your identity."):
        assert answer_to(task, question) == f"my email is {ins.identity['email']}"


def test_gives_name_and_zip_when_asked_if_so_instructed(tasks: list[DeskTask]) -> None:
    task = next(t for t in tasks if t.instructions.identify_by == "name_zip")
    ins = task.instructions
    first, last, zip_code = (ins.identity[k] for k in ("first_name", "last_name", "zip"))
    expected = f"i'm {first} {last}, zip code {zip_code}"
    for question in ("What is your full name and zip code?", "Could you give me your e-mail?"):
        assert answer_to(task, question) == expected


def test_gives_its_identity_only_once(tasks: list[DeskTask]) -> None:
    task = first(tasks, "cancel")
    ins = task.instructions
    text = answer_to(
        task,
        "And your email or zip, please?",
        agent("Can you identify yourself?"),
        user(RETAIL.introduction(ins)),
    )
    assert text != RETAIL.introduction(ins)
    assert text is not None and task.instructions.wants[0].say in text


# --- proposals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template", ["cancel", "order_address", "order_payment", "order_items", "return", "exchange"]
)
def test_says_yes_to_a_proposal_naming_its_key_ids(tasks: list[DeskTask], template: str) -> None:
    task = first(tasks, template)
    values = RETAIL.keys(task.actions[0])
    assert answer_to(task, proposal(task.actions[0], values)) == YES
    assert answer_to(task, proposal(task.actions[0], [v.upper() for v in values])) == YES


@pytest.mark.parametrize(
    "template", ["cancel", "order_address", "order_payment", "order_items", "return", "exchange"]
)
def test_says_no_to_a_proposal_missing_any_key_id(tasks: list[DeskTask], template: str) -> None:
    task = first(tasks, template)
    values = RETAIL.keys(task.actions[0])
    for missing in range(len(values)):
        text = answer_to(task, proposal(task.actions[0], values[:missing] + values[missing + 1 :]))
        assert is_no(text), (missing, text)
        assert task.instructions.wants[0].say in text


def test_says_no_to_a_proposal_for_a_different_order(tasks: list[DeskTask]) -> None:
    task = first(tasks, "cancel")
    order = task.actions[0].kwargs["order_id"]
    other = next(
        t.actions[0].kwargs["order_id"]
        for t in tasks
        if t.actions and t.actions[0].kwargs.get("order_id") not in (None, order)
    )
    text = answer_to(task, f"I can cancel order {other}. Shall I proceed?")
    assert text == f"no, that's not what i asked for. {task.instructions.wants[0].say}"


def test_says_no_to_a_proposal_for_different_items(tasks: list[DeskTask]) -> None:
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


def test_says_no_to_a_proposal_with_another_payment_method(tasks: list[DeskTask]) -> None:
    task = first(tasks, "order_payment")
    order = task.actions[0].kwargs["order_id"]
    text = answer_to(task, proposal(task.actions[0], [order, "credit_card_0000000"]))
    assert is_no(text)


def test_a_statement_without_a_proposal_gets_no_yes(tasks: list[DeskTask]) -> None:
    task = first(tasks, "cancel")
    values = RETAIL.keys(task.actions[0])
    text = answer_to(task, f"Order {values[0]} is pending.")
    assert text != YES


def test_says_no_to_a_proposal_with_a_different_street_number(tasks: list[DeskTask]) -> None:
    task = first(tasks, "order_address")
    kwargs = task.actions[0].kwargs
    wrong = f"1{kwargs['address1']}"
    text = answer_to(task, proposal(task.actions[0], [kwargs["order_id"], wrong, kwargs["zip"]]))
    assert is_no(text)


def test_says_no_to_a_proposal_with_a_different_zip(tasks: list[DeskTask]) -> None:
    task = first(tasks, "order_address")
    kwargs = task.actions[0].kwargs
    wrong_zip = "00000" if kwargs["zip"] != "00000" else "11111"
    address = f"{kwargs['address1']}, {kwargs['city']}, {kwargs['state']} {wrong_zip}"
    text = answer_to(task, proposal(task.actions[0], [kwargs["order_id"], address]))
    assert is_no(text)


# --- questions its instructions answer ---------------------------------------------------------


def test_answers_the_reason(tasks: list[DeskTask]) -> None:
    task = first(tasks, "cancel")
    reason = task.actions[0].kwargs["reason"]
    assert answer_to(task, "What is the reason for the cancellation?") == (
        f"the reason is: {reason}"
    )


@pytest.mark.parametrize("template", ["order_payment", "return", "exchange", "order_items"])
def test_answers_the_payment_method(tasks: list[DeskTask], template: str) -> None:
    task = first(tasks, template)
    method = task.actions[0].kwargs["payment_method_id"]
    assert answer_to(task, "Which payment method should we use?") == f"please use {method}"


@pytest.mark.parametrize("template", ["order_address", "user_address"])
def test_answers_the_address(tasks: list[DeskTask], template: str) -> None:
    task = first(tasks, template)
    kwargs = task.actions[0].kwargs
    text = answer_to(task, "What is the new address?")
    fields = ("address1", "address2", "city", "state", "zip", "country")
    assert text == "the address is " + ", ".join(kwargs[f] for f in fields)


@pytest.mark.parametrize("template", ["order_items", "exchange"])
def test_answers_which_option(tasks: list[DeskTask], template: str) -> None:
    task = first(tasks, template)
    new = task.actions[0].kwargs["new_item_ids"]
    text = answer_to(task, "Which option would you like instead?")
    assert text == "i'd like item " + " and item ".join(new) + " instead"


def test_answers_only_questions_its_request_covers(tasks: list[DeskTask]) -> None:
    task = first(tasks, "cancel")
    say = task.instructions.wants[0].say
    # A cancellation has no payment method to choose: the customer repeats its request.
    assert answer_to(task, "Which payment method should we use?") == f"as i said, {say}"
    # Not a question: no answer.
    assert answer_to(task, "Tell me the reason.") == f"as i said, {say}"


def test_does_not_give_the_same_answer_twice(tasks: list[DeskTask]) -> None:
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
def test_stops_once_its_change_is_made(tasks: list[DeskTask], template: str) -> None:
    task = first(tasks, template)
    done = opened(task, *tool_turn(task.actions[0]), agent("Done. Anything else?"))
    assert reply(task.instructions, done) is None


def test_a_failed_call_does_not_count_as_done(tasks: list[DeskTask]) -> None:
    task = first(tasks, "cancel")
    failed = opened(task, *tool_turn(task.actions[0], error=True), agent("Anything else?"))
    assert reply(task.instructions, failed) is not None


def test_a_compound_request_goes_on_to_its_next_want(tasks: list[DeskTask]) -> None:
    task = first(tasks, "cancel+return")
    wants = task.instructions.wants
    halfway = opened(task, *tool_turn(task.actions[0]), agent("Done. Anything else?"))
    assert reply(task.instructions, halfway) == wants[1].say
    both = [*halfway, user(wants[1].say), *tool_turn(task.actions[1], "w2"), agent("Done too.")]
    assert reply(task.instructions, both) is None


def test_an_information_request_ends_when_the_answer_is_given(tasks: list[DeskTask]) -> None:
    task = first(tasks, "info")
    status, total = task.outputs
    assert reply(task.instructions, opened(task, agent(f"It is {status}."))) is not None
    answered = opened(task, agent(f"It is {status}."), user("and the total?"), agent(f"${total}"))
    assert reply(task.instructions, answered) is None


def test_a_transfer_request_is_not_settled_by_talk(tasks: list[DeskTask]) -> None:
    task = first(tasks, "transfer")
    text = answer_to(task, "I'm sorry to hear that. Is there anything else?")
    assert text == "as i said, i'd like to speak to a human agent about this."


def test_a_forbidden_request_is_settled_by_an_answer(tasks: list[DeskTask]) -> None:
    task = first(tasks, "forbidden")
    refusal = "Sorry, that order has already been processed and cannot be cancelled."
    assert answer_to(task, refusal) is None


def test_a_forbidden_request_is_not_settled_by_an_identity_question(
    tasks: list[DeskTask],
) -> None:
    task = first(tasks, "forbidden")
    text = answer_to(task, "I can help with that. First, what is your email address?")
    assert text == RETAIL.introduction(task.instructions)


# --- giving up --------------------------------------------------------------------------------


def test_gives_up_after_repeating_itself_too_often(tasks: list[DeskTask]) -> None:
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


def test_gives_up_on_a_transfer_request_too(tasks: list[DeskTask]) -> None:
    task = first(tasks, "transfer")
    messages = [SYSTEM]
    count = 0
    text = reply(task.instructions, messages)
    while text is not None and count < 20:
        count += 1
        messages += [user(text), agent("I see.")]
        text = reply(task.instructions, messages)
    assert count == 1 + MAX_REPEATS


# --- action_done and the key ids -------------------------------------------------------------


def test_key_ids_are_the_ids_a_customer_recognises() -> None:
    action = Action(
        name="exchange_delivered_order_items",
        kwargs={
            "order_id": "#W1",
            "item_ids": ["111", "222"],
            "new_item_ids": ["333", "444"],
            "payment_method_id": "paypal_1",
        },
    )
    assert RETAIL.keys(action) == ["#W1", "111", "222", "333", "444"]
    assert CANCEL.action is not None
    assert RETAIL.keys(CANCEL.action) == ["#W1000001"]
    # A tool the procedure does not list: the customer must hear every argument.
    unlisted = Action(name="get_order_details", kwargs={"order_id": "#W1", "note": ["a", "b"]})
    assert RETAIL.keys(unlisted) == ["#W1", "a", "b"]


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


def test_says_no_to_a_proposal_of_another_kind_of_change(tasks: list[DeskTask]) -> None:
    task = first(tasks, "return")
    values = RETAIL.keys(task.actions[0])
    cancel = Action(name="cancel_pending_order", kwargs=task.actions[0].kwargs)
    assert is_no(answer_to(task, proposal(cancel, values)))  # right ids, wrong change
    assert answer_to(task, proposal(task.actions[0], values)) == YES
    worded = "I'll send back " + ", ".join(values) + " as a return. Shall I proceed?"
    assert answer_to(task, worded) == YES


# --- another domain's customer -----------------------------------------------------------------

BAGS = Want(
    kind="change",
    say="please add a bag to reservation ABC123",
    action=Action(
        name="update_reservation_baggages",
        kwargs={"reservation_id": "ABC123", "total_baggages": 2, "nonfree_baggages": 0},
    ),
)


def test_an_airline_customer_identifies_by_user_id() -> None:
    ins = instructions(BAGS, identify_by="user_id")
    messages = [SYSTEM, user(BAGS.say), agent("Could you tell me your user id?")]
    assert reply(ins, messages, AIRLINE) == "my user id is ada_lee_1"
    assert AIRLINE.introduction(ins) == "my user id is ada_lee_1"


def test_an_airline_customer_agrees_in_the_airline_s_words() -> None:
    ins = instructions(BAGS, identify_by="user_id")
    messages = [SYSTEM, user(BAGS.say)]
    update = "I can update the baggage of reservation ABC123. Shall I proceed?"
    assert reply(ins, [*messages, agent(update)], AIRLINE) == YES
    cancel = "I can cancel reservation ABC123. Shall I proceed?"
    assert is_no(reply(ins, [*messages, agent(cancel)], AIRLINE))
    # To the retail desk it is a tool its procedure does not list: every argument must be named.
    assert is_no(reply(instructions(BAGS), [*messages, agent(update)], RETAIL))
