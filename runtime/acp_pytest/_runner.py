"""Running one async test on trio or on asyncio, bounded, with its teardown inside the loop.

The plugin runs the async tests that take ``acp_backend`` (directly or through
``acp_in_memory`` / ``acp_spawn``) itself: the same coroutine function under
``trio.run`` or ``asyncio.run`` as the test's parameter says.  Whatever the
connections opened during the test (:class:`TestScope`), they are closed when
the test's body returns or fails, still inside its event loop, and the whole
is bounded by ``acp_timeout`` seconds: a test that hangs fails with the bound
named, it does not hang the run.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeVar

__all__ = [
    "BACKENDS",
    "DEFAULT_TIMEOUT",
    "Backend",
    "BackendName",
    "TestScope",
    "run_test",
]

BackendName = Literal["trio", "asyncio"]
#: The event loops a test can run on, in the order the parameters are made.
BACKENDS: Final[tuple[BackendName, ...]] = ("trio", "asyncio")
#: Seconds an ``acp`` test may take, teardown included (ini ``acp_timeout``).
DEFAULT_TIMEOUT: Final = 60.0

T = TypeVar("T")


@dataclass(frozen=True)
class Backend:
    """The event loop a test runs on: ``name`` is ``"trio"`` or ``"asyncio"``."""

    name: BackendName

    def __str__(self) -> str:
        return self.name


@dataclass
class TestScope:
    """What one test opened in its event loop, closed at its end (in the loop).

    The fixtures enter their connections here (:meth:`enter`); the runner
    opens :attr:`stack` around the test's body and closes it after, so a
    test needs no ``async with`` of its own.
    """

    backend: Backend
    timeout: float = DEFAULT_TIMEOUT
    stack: AsyncExitStack | None = None
    #: what the fixtures want shown when the test fails: (title, text)
    sections: list[Callable[[], tuple[str, str] | None]] = field(
        default_factory=list[Callable[[], "tuple[str, str] | None"]]
    )
    #: the handler factories the test connected (the fakes' problems are checked)
    offered: list[object] = field(default_factory=list[object])

    __test__ = False  # not a test class, whatever pytest's name pattern says

    async def enter(self, manager: AbstractAsyncContextManager[T]) -> T:
        """Enter ``manager`` until the end of the test; its value."""
        if self.stack is None:
            raise RuntimeError(
                "the acp fixtures connect inside the test's body: an async test "
                "run by the acp plugin (call this from the test, not a fixture)"
            )
        return await self.stack.enter_async_context(manager)


@asynccontextmanager
async def _opened(scope: TestScope) -> AsyncGenerator[None, None]:
    __tracebackhide__ = True
    async with AsyncExitStack() as stack:
        scope.stack = stack
        try:
            yield
        finally:
            scope.stack = None


def _timed_out(scope: TestScope) -> AssertionError:
    return AssertionError(
        f"the test did not finish within acp_timeout={scope.timeout:g} s "
        f"(on {scope.backend}); its connections were closed"
    )


async def _on_trio(scope: TestScope, body: Callable[[], Awaitable[None]]) -> None:
    __tracebackhide__ = True
    import trio

    try:
        with trio.fail_after(scope.timeout):
            async with _opened(scope):
                await body()
    except trio.TooSlowError:
        raise _timed_out(scope) from None


async def _on_asyncio(scope: TestScope, body: Callable[[], Awaitable[None]]) -> None:
    __tracebackhide__ = True
    import asyncio

    async def whole() -> None:
        __tracebackhide__ = True
        async with _opened(scope):
            await body()

    try:
        await asyncio.wait_for(whole(), scope.timeout)
    except asyncio.TimeoutError:
        raise _timed_out(scope) from None


def run_test(
    scope: TestScope, test: Callable[..., Awaitable[None]], kwargs: dict[str, Any]
) -> None:
    """Run the coroutine function ``test(**kwargs)`` on ``scope``'s event loop."""
    __tracebackhide__ = True
    body = functools.partial(test, **kwargs)
    try:
        if scope.backend.name == "trio":
            import trio

            trio.run(_on_trio, scope, body)
        else:
            import asyncio

            asyncio.run(_on_asyncio(scope, body))
    except BaseException as exc:
        # a failure inside a connection's nursery (trio) comes wrapped in an
        # exception group: the test's own assertion is what its report shows
        leaf = _single_leaf(exc)
        if leaf is None:
            raise
        raise leaf from None


def _members(exc: BaseException) -> tuple[BaseException, ...] | None:
    """The exceptions of an exception group (the builtin or its backport)."""
    if not any(cls.__name__ == "BaseExceptionGroup" for cls in type(exc).__mro__):
        return None
    members: tuple[BaseException, ...] = getattr(exc, "exceptions", ())
    return members


def _single_leaf(exc: BaseException) -> BaseException | None:
    """The one exception a group holds (however nested); ``None`` if ``exc``
    is no group or holds several."""
    members = _members(exc)
    if members is None:
        return None
    while members is not None:
        if len(members) != 1:
            return None
        exc = members[0]
        members = _members(exc)
    return exc
