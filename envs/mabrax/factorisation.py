"""MaMuJoCo's factorisations of the brax robots into agents, as index lists (pure Python).

A robot is a graph: one node per actuated joint, hyperedges joining joints that share a body
part, and "global" nodes (the free root) that every agent observes. An agent owns a group of
nodes and actuates their joints; at observation distance ``k`` it sees the nodes reachable in
at most ``k`` hops from its own, with more categories (velocities, body quantities) at depth 0
than further out (positions only). The graphs, partitions and categories are MaMuJoCo's
(``gymnasium_robotics.mamujoco_v1``); the indices address brax's single-agent observation
vector, whose layout :class:`ObsLayout` describes per robot. Nothing here imports JAX or brax.

Agent ``i``'s observation is laid out as MaMuJoCo lays it out: depth by depth, the nodes of a
depth sorted by name, each node's categories in order (a body quantity is emitted once per
body per agent), then the global nodes' positions and then their velocities.
"""

from __future__ import annotations

import dataclasses

# --------------------------------------------------------------------------- the brax layouts


@dataclasses.dataclass(frozen=True)
class ObsLayout:
    """Where each quantity sits in brax's single-agent observation vector of one robot.

    Attributes:
        skipped_qpos: leading generalised positions brax leaves out (the x, or x and y, of
            the root).
        nq, nv: sizes of the generalised position and velocity vectors.
        nbody: brax links with per-body quantities, or 0 when the observation has none.
        links: MuJoCo body id -> brax link index; brax fuses a body without joints into its
            parent (the humanoid's feet), which then has no entry of its own (``None``).
        body_cats: per-body categories in observation order, with their widths.
        qfrc_actuator: whether the actuator forces (one per dof) close the vector.
    """

    skipped_qpos: int
    nq: int
    nv: int
    nbody: int = 0
    body_cats: tuple[tuple[str, int], ...] = ()
    qfrc_actuator: bool = False
    links: tuple[int | None, ...] = ()

    def qpos(self, i: int) -> int:
        return i - self.skipped_qpos

    def qvel(self, i: int) -> int:
        return self.nq - self.skipped_qpos + i

    def body(self, category: str, body: int) -> list[int]:
        """Indices of ``category`` (``cinert`` or ``cvel``) of MuJoCo body ``body`` (>= 1)."""
        link = self.links[body]
        if link is None:
            return []
        offset = self.nq - self.skipped_qpos + self.nv
        for name, width in self.body_cats:
            if name == category:
                return list(range(offset + width * link, offset + width * (link + 1)))
            offset += width * self.nbody
        raise KeyError(category)

    def actuator_force(self, dof: int) -> int:
        widths = sum(width for _, width in self.body_cats)
        return self.nq - self.skipped_qpos + self.nv + widths * self.nbody + dof

    @property
    def size(self) -> int:
        return self.actuator_force(self.nv if self.qfrc_actuator else 0)

    @property
    def categories(self) -> frozenset[str]:
        cats = {"qpos", "qvel"} | {name for name, _ in self.body_cats}
        return frozenset(cats | ({"qfrc_actuator"} if self.qfrc_actuator else set()))


# --------------------------------------------------------------------------- the graphs


@dataclasses.dataclass(frozen=True)
class Node:
    """One actuated hinge joint: its name, position/velocity index and actuator index."""

    name: str
    qpos: int
    qvel: int
    actuator: int
    bodies: tuple[int, ...] = ()  # MuJoCo body ids whose body quantities it observes


@dataclasses.dataclass(frozen=True)
class Robot:
    """A brax robot with MaMuJoCo's graph and its named factorisations.

    Attributes:
        brax_name: the brax environment (``brax.envs.get_environment``).
        layout: brax's observation layout.
        nodes: the actuated joints.
        edges: hyperedges, as tuples of node names.
        global_qpos / global_qvel: the root's observed generalised position / velocity
            indices (MaMuJoCo's global nodes with its default categories ``qpos``, ``qvel``).
        local_categories: MaMuJoCo's categories at depth 0 and at depth >= 1.
        partitions: factorisation name -> groups of node names, one group per agent.
    """

    brax_name: str
    layout: ObsLayout
    nodes: tuple[Node, ...]
    edges: tuple[tuple[str, ...], ...]
    global_qpos: tuple[int, ...]
    global_qvel: tuple[int, ...]
    local_categories: tuple[tuple[str, ...], tuple[str, ...]]
    partitions: dict[str, tuple[tuple[str, ...], ...]]

    def node(self, name: str) -> Node:
        return next(n for n in self.nodes if n.name == name)


def _chain(joints: list[tuple[str, int]]) -> tuple[Node, ...]:
    """Nodes for planar robots whose hinge joints follow a 3-dof root, actuated in order."""
    return tuple(Node(name, qpos, qpos, act) for act, (name, qpos) in enumerate(joints))


_PLANAR_GLOBALS = dict(global_qpos=(1, 2), global_qvel=(0, 1, 2))
_QPOS_QVEL = (("qpos", "qvel"), ("qpos",))

# Ant: brax's q is [x, y, z, quat(4), hip_1, ankle_1, ..., hip_4, ankle_4]; its actuators
# drive hip_4, ankle_4, hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3 (as in Gymnasium).
_ANT_NODES = tuple(
    Node(f"{part}{leg}", 7 + 2 * (leg - 1) + j, 6 + 2 * (leg - 1) + j, (2 * leg + j) % 8)
    for leg in range(1, 5)
    for j, part in enumerate(("hip", "ankle"))
)

# Humanoid: q is [x, y, z, quat(4), then 17 hinges]; actuator order below (as in Gymnasium).
# Body ids: 1 torso, 2 lwaist, 3 pelvis, 4-6 right thigh/shin/foot, 7-9 left thigh/shin/foot,
# 10-11 right upper/lower arm, 12-13 left upper/lower arm.
_HUMANOID_JOINTS = [  # name, actuator index, bodies MaMuJoCo observes for it
    ("abdomen_z", 1, (1, 2, 3)),
    ("abdomen_y", 0, (1, 2, 3)),
    ("abdomen_x", 2, (3, 4, 7)),
    ("right_hip_x", 3, (4, 5)),
    ("right_hip_z", 4, (4, 5)),
    ("right_hip_y", 5, (4, 5)),
    ("right_knee", 6, (5, 6)),
    ("left_hip_x", 7, (7, 8)),
    ("left_hip_z", 8, (7, 8)),
    ("left_hip_y", 9, (7, 8)),
    ("left_knee", 10, (8, 9)),
    ("right_shoulder1", 11, (1, 10, 11)),
    ("right_shoulder2", 12, (1, 10, 11)),
    ("right_elbow", 13, (11,)),
    ("left_shoulder1", 14, (1, 12, 13)),
    ("left_shoulder2", 15, (1, 12, 13)),
    ("left_elbow", 16, (13,)),
]
_ABDOMEN = ("abdomen_x", "abdomen_y", "abdomen_z")
_R_HIP = ("right_hip_x", "right_hip_y", "right_hip_z")
_L_HIP = ("left_hip_x", "left_hip_y", "left_hip_z")
_R_ARM = ("right_shoulder1", "right_shoulder2")
_L_ARM = ("left_shoulder1", "left_shoulder2")

ROBOTS: dict[str, Robot] = {
    "ant": Robot(
        brax_name="ant",
        layout=ObsLayout(skipped_qpos=2, nq=15, nv=14),
        nodes=_ANT_NODES,
        edges=(
            ("ankle4", "hip4"),
            ("ankle1", "hip1"),
            ("ankle2", "hip2"),
            ("ankle3", "hip3"),
            ("hip4", "hip1", "hip2", "hip3"),
        ),
        global_qpos=tuple(range(2, 7)),
        global_qvel=tuple(range(6)),
        local_categories=(("qpos", "qvel", "cfrc_ext"), ("qpos",)),
        partitions={
            "2x4": (("hip1", "ankle1", "hip2", "ankle2"), ("hip3", "ankle3", "hip4", "ankle4")),
            "2x4d": (("hip1", "ankle1", "hip4", "ankle4"), ("hip2", "ankle2", "hip3", "ankle3")),
            "4x2": (("hip1", "ankle1"), ("hip2", "ankle2"), ("hip3", "ankle3"), ("hip4", "ankle4")),
        },
    ),
    "halfcheetah": Robot(
        brax_name="halfcheetah",
        layout=ObsLayout(skipped_qpos=1, nq=9, nv=9),
        nodes=_chain(
            [(n, 3 + i) for i, n in enumerate("bthigh bshin bfoot fthigh fshin ffoot".split())]
        ),
        edges=(
            ("bfoot", "bshin"),
            ("bshin", "bthigh"),
            ("bthigh", "fthigh"),
            ("fthigh", "fshin"),
            ("fshin", "ffoot"),
        ),
        **_PLANAR_GLOBALS,
        local_categories=_QPOS_QVEL,
        partitions={
            "2x3": (("bthigh", "bshin", "bfoot"), ("fthigh", "fshin", "ffoot")),
            "6x1": tuple((n,) for n in "bthigh bshin bfoot fthigh fshin ffoot".split()),
        },
    ),
    "hopper": Robot(
        brax_name="hopper",
        layout=ObsLayout(skipped_qpos=1, nq=6, nv=6),
        nodes=_chain([("thigh_joint", 3), ("leg_joint", 4), ("foot_joint", 5)]),
        edges=(("foot_joint", "leg_joint"), ("leg_joint", "thigh_joint")),
        **_PLANAR_GLOBALS,
        local_categories=_QPOS_QVEL,
        partitions={"3x1": (("thigh_joint",), ("leg_joint",), ("foot_joint",))},
    ),
    "humanoid": Robot(
        brax_name="humanoid",
        layout=ObsLayout(
            skipped_qpos=2,
            nq=24,
            nv=23,
            nbody=11,
            body_cats=(("cinert", 10), ("cvel", 6)),
            qfrc_actuator=True,
            # world, torso, lwaist, pelvis, right thigh/shin/foot, left thigh/shin/foot,
            # right upper/lower arm, left upper/lower arm: the feet are fused into the shins.
            links=(None, 0, 1, 2, 3, 4, None, 5, 6, None, 7, 8, 9, 10),
        ),
        nodes=tuple(
            Node(name, 7 + i, 6 + i, act, bodies)
            for i, (name, act, bodies) in enumerate(_HUMANOID_JOINTS)
        ),
        edges=(
            _ABDOMEN,
            _R_HIP,
            _L_HIP,
            ("left_elbow", *_L_ARM),
            ("right_elbow", *_R_ARM),
            ("left_knee", *_L_HIP),
            ("right_knee", *_R_HIP),
            (*_L_ARM, *_ABDOMEN),
            (*_R_ARM, *_ABDOMEN),
            (*_ABDOMEN, *_L_HIP),
            (*_ABDOMEN, *_R_HIP),
        ),
        global_qpos=tuple(range(2, 7)),
        global_qvel=tuple(range(6)),
        local_categories=(
            ("qpos", "qvel", "cinert", "cvel", "qfrc_actuator", "cfrc_ext"),
            ("qpos",),
        ),
        partitions={
            "9|8": (
                (*_ABDOMEN, *_R_ARM, "right_elbow", *_L_ARM, "left_elbow"),
                (*_R_HIP, "right_knee", *_L_HIP, "left_knee"),
            ),
        },
    ),
    "walker2d": Robot(
        brax_name="walker2d",
        layout=ObsLayout(skipped_qpos=1, nq=9, nv=9),
        nodes=_chain(
            [
                (n, 3 + i)
                for i, n in enumerate(
                    "thigh_joint leg_joint foot_joint thigh_left_joint leg_left_joint "
                    "foot_left_joint".split()
                )
            ]
        ),
        edges=(
            ("foot_joint", "leg_joint"),
            ("leg_joint", "thigh_joint"),
            ("foot_left_joint", "leg_left_joint"),
            ("leg_left_joint", "thigh_left_joint"),
            ("thigh_joint", "thigh_left_joint"),
        ),
        **_PLANAR_GLOBALS,
        local_categories=_QPOS_QVEL,
        partitions={
            "2x3": (
                ("foot_joint", "leg_joint", "thigh_joint"),
                ("foot_left_joint", "leg_left_joint", "thigh_left_joint"),
            ),
        },
    ),
}

KNOWN = tuple(f"{robot}_{conf}" for robot, r in ROBOTS.items() for conf in r.partitions)
"""Every ``<robot>_<factorisation>`` name, e.g. ``ant_4x2``; JaxMARL registers five of them."""

REGISTERED = ("ant_4x2", "halfcheetah_6x1", "hopper_3x1", "humanoid_9|8", "walker2d_2x3")
"""The names that are ``jaxmarl.make`` ids (JaxMARL's; the package registers them)."""


def known_factorisations() -> dict[str, tuple[str, ...]]:
    """Robot -> its ``<robot>_<factorisation>`` names, e.g. ``{"ant": ("ant_2x4", ...), ...}``."""
    return {robot: tuple(f"{robot}_{conf}" for conf in r.partitions) for robot, r in ROBOTS.items()}


def _known_list() -> str:
    return "; ".join(
        f"{robot}: {', '.join(names)}" for robot, names in known_factorisations().items()
    )


def unknown_id_hint(env_id: str) -> str | None:
    """What the registry adds to its error for an unknown id that names one of these robots
    (``ant_3x3``): the known factorisations; ``None`` for ids of other robots."""
    robot = env_id.partition("_")[0]
    if robot not in ROBOTS:
        return None
    if env_id in KNOWN:
        return (
            f"{env_id} is a MaMuJoCo factorisation without an id: build it with "
            f"jaxmarl.envs.mabrax.MABraxEnv({env_id!r}) (ids: {', '.join(REGISTERED)})"
        )
    return (
        f"{env_id!r} is not a known MaMuJoCo factorisation of {robot}; known: {_known_list()} "
        f"(ids: {', '.join(REGISTERED)}; the others through jaxmarl.envs.mabrax.MABraxEnv(name))"
    )


def observing_root_position(robot: Robot) -> Robot:
    """``robot`` with brax's observation keeping the root's leading positions (brax's
    ``exclude_current_positions_from_observation=False``): the vector grows by the positions
    the default layout skips, placed first, so every entry's index grows by as many. The agents
    observe the same quantities (MaMuJoCo's global positions leave out x and y)."""
    layout = dataclasses.replace(robot.layout, skipped_qpos=0)
    return dataclasses.replace(robot, layout=layout)


def parse(env_name: str) -> tuple[Robot, str]:
    """``"ant_4x2" -> (ROBOTS["ant"], "4x2")``; an unknown name lists the known ones."""
    robot, _, conf = env_name.partition("_")
    if robot not in ROBOTS or conf not in ROBOTS[robot].partitions:
        raise ValueError(
            f"unknown MaMuJoCo factorisation {env_name!r}; known: {_known_list()} "
            f"(robot '_' factorisation, as in MaMuJoCo's agent_conf)"
        )
    return ROBOTS[robot], conf


def nodes_at_distance(robot: Robot, group: tuple[str, ...], k: int) -> list[list[str]]:
    """Node names at exactly 0, 1, ..., k hops from ``group``, each depth sorted by name."""
    if k < 0:
        raise ValueError(f"observation distance k must be >= 0, got {k}")
    seen = set(group)
    frontier = set(group)
    depths = [sorted(frontier)]
    for _ in range(k):
        reach = {other for name in frontier for e in robot.edges if name in e for other in e}
        frontier = reach - seen
        seen |= frontier
        depths.append(sorted(frontier))
    return depths


GLOBAL_CATEGORIES = ("qpos", "qvel")
"""MaMuJoCo's categories of the global (root) nodes: its default categories, ``qpos`` and
``qvel``, are the ones brax's observations hold."""


def observation_indices(
    robot: Robot,
    group: tuple[str, ...],
    k: int,
    global_categories: tuple[str, ...] = ("qpos", "qvel"),
) -> list[int]:
    """Indices into brax's observation vector that an agent owning ``group`` observes.

    Categories brax does not observe (``cfrc_ext``: brax leaves contact forces out) are
    skipped; MaMuJoCo's own layout is otherwise followed exactly.
    """
    layout = robot.layout
    out: list[int] = []
    seen_bodies: dict[str, set[int]] = {}
    for depth, names in enumerate(nodes_at_distance(robot, group, k)):
        categories = robot.local_categories[min(depth, 1)]
        for name in names:
            node = robot.node(name)
            for category in categories:
                if category not in layout.categories:
                    continue
                if category == "qpos":
                    out.append(layout.qpos(node.qpos))
                elif category == "qvel":
                    out.append(layout.qvel(node.qvel))
                elif category == "qfrc_actuator":
                    out.append(layout.actuator_force(node.qvel))
                else:
                    for body in node.bodies:
                        if body not in seen_bodies.setdefault(category, set()):
                            seen_bodies[category].add(body)
                            out.extend(layout.body(category, body))
    for category in global_categories:
        if category == "qpos":
            out.extend(layout.qpos(i) for i in robot.global_qpos)
        elif category == "qvel":
            out.extend(layout.qvel(i) for i in robot.global_qvel)
        else:
            raise ValueError(
                f"global category {category!r} is not supported; use {GLOBAL_CATEGORIES}"
            )
    return out


def action_indices(robot: Robot, group: tuple[str, ...]) -> list[int]:
    """Indices into brax's action vector that an agent owning ``group`` controls (node order)."""
    return [robot.node(name).actuator for name in group]


def agent_names(n: int) -> list[str]:
    return [f"agent_{i}" for i in range(n)]
