"""The matcher: Kubernetes' scheduling rules applied to a placement and a stack's pool contracts.

`judge` says whether a pod can land on a pool and why not; `landing_pools` ranks the pools it can land
on the way kube-scheduler scores nodes (docs/architecture.md#the-matcher). Pure: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from spotkube.platform.contract.labels import COMPUTE_CLASS_LABEL, PoolContract
from spotkube.platform.contract.placements import Placement
from spotkube.platform.records import record


@record
class Verdict:
    """Whether a pod can land on a pool, and if not the first reason why (for error messages).

    `preference` is the weight of the preferred node affinity terms a node matches;
    `intolerable_soft_taints` counts the PreferNoSchedule taints the pod does not tolerate. The
    scheduler scores nodes on both (see `landing_pools`).
    """

    pool: str
    fits: bool
    reason: str = ""
    preference: int = 0
    intolerable_soft_taints: int = 0


def _judge_labels(placement: Placement, pool: PoolContract, labels: Mapping[str, str]) -> Verdict:
    """The label part of `judge` for one of the pool's label sets (one zone's nodes)."""
    for key, value in placement.node_selector.items():
        if labels.get(key) != value:
            return Verdict(pool.name, False, f"nodeSelector {key}={value} does not match")
    if placement.required is not None and not any(
        term and all(r.matches(labels) for r in term) for term in placement.required
    ):
        if not placement.required:
            return Verdict(pool.name, False, "required node affinity has no terms, which matches no node")
        unmet = next((r for term in placement.required for r in term if not r.matches(labels)), None)
        detail = f" ({unmet})" if unmet else ""
        return Verdict(pool.name, False, f"required node affinity does not match{detail}")
    preference = sum(w for w, term in placement.preferred if all(r.matches(labels) for r in term))
    return Verdict(pool.name, True, preference=preference)


def judge(placement: Placement, pool: PoolContract) -> Verdict:
    """Apply the Kubernetes scheduling rules that depend on node labels and taints.

    Taints with NoSchedule or NoExecute must each be tolerated, while PreferNoSchedule ones only
    count against the pool; the nodeSelector must match exactly; at least one required node
    selector term must match; preferred terms only add weight. A pool spread over zones fits when
    the nodes of one of its zones fit. GPU requests must fit the pool's GPUs per node.

    A pod whose nodeSelector picks a compute class also tolerates that class's taint: GKE's
    admission adds the toleration to such pods. Only GKE pools carry the taint, so this models GKE
    and changes nothing elsewhere.
    """
    for reason in placement.unsupported:
        return Verdict(pool.name, False, reason)
    selected_class = placement.node_selector.get(COMPUTE_CLASS_LABEL)
    soft = 0
    for taint in pool.taints:
        if any(t.tolerates(taint) for t in placement.tolerations):
            continue
        if taint.key == COMPUTE_CLASS_LABEL and taint.value == selected_class:
            continue
        if taint.effect == "PreferNoSchedule":
            soft += 1
            continue
        return Verdict(pool.name, False, f"does not tolerate taint {taint}")
    verdicts = [_judge_labels(placement, pool, labels) for labels in pool.node_label_sets()]
    fitting = [v for v in verdicts if v.fits]
    if not fitting:
        return verdicts[0]
    have = pool.advertised().get(placement.gpu_resource, 0)
    if placement.gpus > have:
        if not pool.accelerator:
            offer = "no GPU"
        elif pool.sharing is None:
            offer = f"{pool.gpu_count} × {pool.accelerator}"
        else:
            offer = f"{pool.gpu_count} × {pool.accelerator} shared ({pool.sharing.text()})"
        return Verdict(pool.name, False, f"requests {placement.gpus} {placement.gpu_resource}; a node has {offer}")
    preference = max(v.preference for v in fitting)
    return Verdict(pool.name, True, preference=preference, intolerable_soft_taints=soft)


#: kube-scheduler's default weights of the two score plugins that depend on pool labels and taints
#: (pkg/scheduler/apis/config/v1/default_plugins.go): NodeAffinity 2, TaintToleration 3.
NODE_AFFINITY_WEIGHT = 2
TAINT_TOLERATION_WEIGHT = 3
MAX_NODE_SCORE = 100


def _scores(verdicts: Sequence[Verdict]) -> dict[str, float]:
    """The scheduler's combined score per fitting pool: each plugin's raw score normalised to
    0..100 over the candidates (TaintToleration reversed, fewer intolerable taints is better),
    then weighted and summed, as kube-scheduler's DefaultNormalizeScore does."""
    most_preferred = max((v.preference for v in verdicts), default=0)
    most_soft = max((v.intolerable_soft_taints for v in verdicts), default=0)
    scores = {}
    for v in verdicts:
        affinity = MAX_NODE_SCORE * v.preference / most_preferred if most_preferred else 0
        taints = MAX_NODE_SCORE * (1 - v.intolerable_soft_taints / most_soft) if most_soft else MAX_NODE_SCORE
        scores[v.pool] = NODE_AFFINITY_WEIGHT * affinity + TAINT_TOLERATION_WEIGHT * taints
    return scores


def landing_pools(placement: Placement, pools: Sequence[PoolContract]) -> list[str]:
    """The pools a pod can land on, the scheduler's favourite first (ties keep the pools' order)."""
    fitting = [v for v in (judge(placement, pool) for pool in pools) if v.fits]
    scores = _scores(fitting)
    return [v.pool for v in sorted(fitting, key=lambda v: -scores[v.pool])]


def why_nowhere(placement: Placement, pools: Sequence[PoolContract]) -> str:
    """One line per pool saying why the pod cannot land there."""
    return "; ".join(f"{v.pool}: {v.reason}" for v in (judge(placement, p) for p in pools) if not v.fits)
