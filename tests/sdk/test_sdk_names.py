"""One name, one thing: the SDK's network client is ``join_match``; ``arena_sdk.testing.play_match`` plays locally."""

from __future__ import annotations

import pytest

import arena_sdk
from arena_sdk import client, testing


def test_join_match_is_the_clients_and_play_match_the_harness():
    assert arena_sdk.join_match is client.join_match
    assert testing.play_match is not client.join_match and not hasattr(client, "play_match")


def test_the_old_name_still_works_with_a_warning():
    with pytest.warns(DeprecationWarning, match="join_match"):
        old = arena_sdk.play_match
    assert old is client.join_match
