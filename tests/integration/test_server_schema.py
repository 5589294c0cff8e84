"""A built-in server answers every request generated from its own OpenAPI schema without a
server error, with a status and a body the schema lists (schemathesis; bounded in examples)."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tests.support.servers import running_server

EXAMPLES = 25  # per route: enough for each field's edge cases, a few seconds in all
# A valid-looking request may still be refused: /privileged takes one of id or data_idx, a
# rule across parameters that a schema cannot state. Every other check runs.
NOT_CHECKED = [positive_data_acceptance]


def test_every_route_answers_as_its_schema_says():
    with running_server("textcraft") as url:
        schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) >= 9
        for operation in operations:

            @given(case=operation.as_strategy())
            @settings(max_examples=EXAMPLES, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck))  # fmt: skip
            def answers_as_documented(case):
                case.call_and_validate(excluded_checks=NOT_CHECKED)

            answers_as_documented()
