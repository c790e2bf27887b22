"""Mass properties of shapes (rbd/reference/mass_properties.py): closed forms and MuJoCo."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rbd.reference.mass_properties import mesh_inertia, primitive_inertia, primitive_volume

# Sums of a few dozen products of O(1) numbers: round-off only.
RTOL = 1e-12


def _box_mesh(a, b, c):
    """The 12 outward triangles of the box [-a, a] x [-b, b] x [-c, c]."""
    V = np.array(list(itertools.product((-a, a), (-b, b), (-c, c))), dtype=float)
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    F = []
    for i, j, k, m in quads:
        F += [(i, j, k), (i, k, m)]
    F = np.array(F)
    # orient outward: the normal points away from the centre
    T = V[F]
    n = np.cross(T[:, 1] - T[:, 0], T[:, 2] - T[:, 0])
    flip = np.einsum("ij,ij->i", n, T.mean(axis=1)) < 0
    F[flip] = F[flip][:, ::-1]
    return V, F


def _shifted_rotated(V, rng):
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    Q *= np.sign(np.linalg.det(Q))
    p = rng.normal(size=3)
    return V @ Q.T + p, Q, p


@pytest.mark.parametrize("mode", ["exact", "legacy", "convex"])
def test_box_mesh_matches_the_closed_form(mode, rng):
    a, b, c = 0.3, 0.5, 0.7
    V, F = _box_mesh(a, b, c)
    W, Q, p = _shifted_rotated(V, rng)
    volume, com, I = mesh_inertia(W, F, mode)
    assert volume == pytest.approx(8 * a * b * c, rel=RTOL)
    np.testing.assert_allclose(com, p, atol=RTOL)
    expected = Q @ np.diag(primitive_inertia("box", [a, b, c], volume)) @ Q.T
    np.testing.assert_allclose(I, expected, atol=RTOL * np.abs(expected).max())
    # and the closed form itself: m (b^2 + c^2) / 3 about x
    assert primitive_inertia("box", [a, b, c], 1.0)[0] == pytest.approx((b * b + c * c) / 3)


def test_box_shell_mesh_matches_the_plate_formula():
    """Six thin plates: the mesh shell rule and MuJoCo's closed-form box shell agree."""
    a, b, c = 0.3, 0.5, 0.7
    V, F = _box_mesh(a, b, c)
    area, com, I = mesh_inertia(V, F, "shell")
    assert area == pytest.approx(primitive_volume("box", [a, b, c], shell=True), rel=RTOL)
    np.testing.assert_allclose(np.diag(I), primitive_inertia("box", [a, b, c], area, shell=True),
                               rtol=1e-12)


def test_tetrahedron_matches_its_integrals():
    """The unit right tetrahedron: V = 1/6, c = (1/4)(1, 1, 1); about c,
    I_xx = ∫(y² + z²) - V (c_y² + c_z²) = 1/30 - 1/48 = 1/80 and
    I_xy = -(1/120 - V c_x c_y) = 1/480."""
    V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=float)
    F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    volume, com, I = mesh_inertia(V, F, "exact")
    assert volume == pytest.approx(1 / 6)
    np.testing.assert_allclose(com, [0.25] * 3)
    assert I[0, 0] == pytest.approx(1 / 80, rel=1e-12)
    assert I[0, 1] == pytest.approx(1 / 480, rel=1e-12)


def test_legacy_differs_from_exact_on_a_non_convex_mesh():
    """Two boxes glued into an L: exact is the sum of the parts, convex is the hull."""
    V1, F1 = _box_mesh(0.5, 0.5, 0.5)
    V2, F2 = _box_mesh(0.5, 0.5, 0.5)
    V2 = V2 + [1.0, 0, 0]
    V3, F3 = _box_mesh(0.5, 0.5, 0.5)
    V3 = V3 + [0, 1.0, 0]
    V = np.vstack([V1, V2, V3])
    F = np.vstack([F1, F2 + 8, F3 + 16])  # overlapping faces cancel in the signed sums
    volume, com, _ = mesh_inertia(V, F, "exact")
    assert volume == pytest.approx(3.0)
    np.testing.assert_allclose(com, [1 / 3, 1 / 3, 0], atol=1e-14)
    hull_volume = mesh_inertia(V, F, "convex")[0]
    assert hull_volume == pytest.approx(3.5)  # the L's hull adds half a cube


@pytest.mark.parametrize("kind, size", [("sphere", [0.3]), ("capsule", [0.2, 0.5]),
                                        ("cylinder", [0.2, 0.5]), ("box", [0.1, 0.2, 0.3]),
                                        ("ellipsoid", [0.1, 0.2, 0.3])])
def test_solid_primitives_against_textbook_forms(kind, size):
    s = np.array(size + [0] * (3 - len(size)), dtype=float)
    m = 2.0
    I = primitive_inertia(kind, s, m)
    r = s[0]
    if kind == "sphere":
        expected = [2 / 5 * m * r * r] * 3
        assert primitive_volume(kind, s) == pytest.approx(4 / 3 * math.pi * r ** 3)
    elif kind == "cylinder":
        h = 2 * s[1]
        expected = [m * (3 * r * r + h * h) / 12] * 2 + [m * r * r / 2]
    elif kind == "capsule":
        # a cylinder plus a sphere split in two hemispheres at the ends (Steiner)
        h = 2 * s[1]
        vc, vs = math.pi * r * r * h, 4 / 3 * math.pi * r ** 3
        mc, ms = m * vc / (vc + vs), m * vs / (vc + vs)
        d = h / 2 + 3 * r / 8  # a hemisphere's centre from the capsule's centre
        ixx_hemi = 83 / 320 * (ms / 2) * r * r  # about its own centre
        expected = [mc * (3 * r * r + h * h) / 12 + 2 * (ixx_hemi + ms / 2 * d * d)] * 2 \
            + [mc * r * r / 2 + 2 / 5 * ms * r * r]
    elif kind == "box":
        a, b, c = 2 * s
        expected = [m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12]
    else:
        a, b, c = s
        expected = [m * (b * b + c * c) / 5, m * (a * a + c * c) / 5, m * (a * a + b * b) / 5]
    np.testing.assert_allclose(I, expected, rtol=1e-12)


# --- against MuJoCo ------------------------------------------------------------------------------
def _mujoco_body(xml):
    mujoco = pytest.importorskip("mujoco", reason="the MuJoCo cross-checks need PyPI 'mujoco'")
    m = mujoco.MjModel.from_xml_string(xml)
    w, x, y, z = m.body_iquat[1]
    from rbd.spatial import quat_to_rot

    R = quat_to_rot(np.array([x, y, z, w]))
    return m.body_mass[1], m.body_ipos[1], R @ np.diag(m.body_inertia[1]) @ R.T


def _rbd_body(xml):
    from rbd import mjcf

    (link,) = mjcf._body_inertias(xml)
    return link.mass, link.com, link.I_com


# A non-convex, off-centre prism: an L-shaped cross-section extruded along z.
_L = np.array([[0, 0], [2, 0], [2, 1], [1, 1], [1, 3], [0, 3]], dtype=float) * 0.1 + [0.05, 0.02]


def _prism_xml(mode, geom=""):
    n = len(_L)
    V = np.vstack([np.c_[_L, np.zeros(n)], np.c_[_L, np.full(n, 0.25)]])
    fan = [(0, k, k + 1) for k in range(1, n - 1)]  # counter-clockwise seen from +z
    F = [(a, c, b) for a, b, c in fan]  # the bottom faces -z
    F += [(a + n, b + n, c + n) for a, b, c in fan]
    for k in range(n):  # sides: edge direction x z points outward for a ccw outline
        j = (k + 1) % n
        F += [(k, j, j + n), (k, j + n, k + n)]
    F = np.array(F)
    vertex = " ".join(f"{x:.17g}" for x in V.ravel())
    face = " ".join(str(i) for i in F.ravel())
    return (f'<mujoco><asset><mesh name="m" vertex="{vertex}" face="{face}" inertia="{mode}"/>'
            f'</asset><worldbody><body><freejoint/><geom type="mesh" mesh="m" {geom}/>'
            '</body></worldbody></mujoco>')


@pytest.mark.parametrize("mode", ["exact", "convex", "legacy", "shell"])
def test_mesh_body_inertia_matches_mujoco(mode):
    """The whole pipeline of a mesh geom: mass = density x volume, centre, inertia."""
    xml = _prism_xml(mode, 'density="700"')
    m_mj, c_mj, I_mj = _mujoco_body(xml)
    m, c, I = _rbd_body(xml)
    assert m == pytest.approx(m_mj, rel=1e-12)
    np.testing.assert_allclose(c, c_mj, atol=1e-12 * np.abs(c_mj).max())
    # MuJoCo diagonalizes the mesh inertia by a Jacobi sweep that stops at an absolute
    # off-diagonal of 1e-12 (mjuu_eig3): agreement to that level, relative to the moments
    np.testing.assert_allclose(I, I_mj, atol=1e-7 * np.abs(I_mj).max())


@pytest.mark.parametrize("kind, size", [("sphere", "0.1"), ("capsule", "0.1 0.2"),
                                        ("cylinder", "0.1 0.2"), ("box", "0.1 0.2 0.3"),
                                        ("ellipsoid", "0.1 0.2 0.3")])
@pytest.mark.parametrize("shell", ["false", "true"])
def test_primitive_body_inertia_matches_mujoco(kind, size, shell):
    xml = (f'<mujoco><worldbody><body><freejoint/><geom type="{kind}" size="{size}" '
           f'pos="0.1 0.2 0.3" euler="10 20 30" shellinertia="{shell}"/></body></worldbody>'
           '</mujoco>')
    m_mj, c_mj, I_mj = _mujoco_body(xml)
    m, c, I = _rbd_body(xml)
    assert m == pytest.approx(m_mj, rel=1e-12)
    np.testing.assert_allclose(c, c_mj, atol=1e-14)
    np.testing.assert_allclose(I, I_mj, atol=1e-10 * np.abs(I_mj).max())
