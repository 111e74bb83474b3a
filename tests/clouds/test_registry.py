"""The registry loads a cloud only where a stack of that cloud needs it, and answers as if it asked
every cloud: the modules it names for every plan are the profile's own, and each registration is read
by the clouds whose Pulumi package it names exactly as all of them together read it
(`tests/cli/test_bench.py` checks that a plan of one cloud's stack never loads the other's profile)."""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module

import pytest

from spotkube.clouds import CLOUDS, PROFILES, offline_id, offline_outputs, registered_pools, upgrade_exposures
from spotkube.components.offline import run_stack
from spotkube.platform.cloud import Cloud
from spotkube.platform.project import Project


@pytest.mark.parametrize("cloud", sorted(PROFILES))
def test_the_modules_every_plan_reads_are_the_profile_s_own(cloud: str) -> None:
    modules, profile = PROFILES[cloud], CLOUDS[cloud]
    data = import_module(modules.module("catalog"))
    assert data.PRICING is profile.pricing
    assert profile.catalog_file == data.CATALOG_FILE
    assert import_module(modules.module("kubeconfig")).login_problem is profile.login_problem


def test_no_two_clouds_share_a_region_name() -> None:
    """The validation asks the other clouds about a region only when the stack's own cloud lacks it."""
    clouds = list(CLOUDS.values())
    shared = {(a.cloud, b.cloud): set(a.regions) & set(b.regions)
              for a in clouds for b in clouds if a is not b}
    assert not any(shared.values()), shared


def test_each_registration_is_read_as_every_cloud_together_reads_it(repo_project: Project) -> None:
    stacks = repo_project.stacks()
    assert stacks, "the repository ships stacks"
    for stack in stacks:
        run = run_stack(repo_project, stack)
        resources = [(r.type, r.name, r.inputs) for r in run.registrations]
        for token, name, inputs in resources:
            every = list(CLOUDS.values())
            assert offline_outputs(token, name, inputs) == {
                k: v for p in every
                for k, v in p.offline_outputs(token, name, inputs).items()}, (stack, token)
            assert offline_id(token, name, inputs) == next(
                (i for p in every if (i := p.offline_id(token, name, inputs)) is not None),
                None), (stack, token)
            assert registered_pools(token, name, inputs) == [
                pool for p in every for pool in p.read_pools(token, name, inputs)], (stack, token)
        assert upgrade_exposures(resources) == [
            e for p in CLOUDS.values() if p.read_upgrades
            for e in p.read_upgrades(resources)], stack


def test_a_cloud_that_leaves_out_a_fact_is_refused_when_it_is_defined_naming_the_facts() -> None:
    with pytest.raises(TypeError) as refused:
        type("Half", (Cloud,), {"cloud": "half", "title": "Half"})
    assert "the cloud Half gives no labels, regions, region_examples" in str(refused.value)


def test_a_cloud_that_gives_every_fact_but_not_every_method_cannot_be_made() -> None:
    facts = {name: getattr(CLOUDS[cloud], name) for cloud in CLOUDS for name in Cloud.__annotations__}
    partial = type("Partial", (Cloud,), facts)
    with pytest.raises(TypeError, match="abstract"):
        partial()


def test_the_contract_knows_every_registered_cloud_s_taints_whatever_a_program_imports_first() -> None:
    """A pipeline author may import only the contract; its spot placements still tolerate every cloud's."""
    code = ("from spotkube.platform.contract import tolerate_interruptible\n"
            "print(sorted(str(t.key) for t in tolerate_interruptible()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    expected = sorted({t.key for p in CLOUDS.values() for t in p.labels.interruptible_taints.values()})
    assert expected and done.stdout.strip() == str(expected)
