"""MuJoCo's constraint model against MuJoCo: impedance, reference acceleration, Newton, PGS.

The inputs are MuJoCo's own arrays after ``mj_forward`` (``M``, ``qacc_smooth``,
dense ``efc_J``, ``efc_aref``, ``efc_D``, ``efc_R``, contact cones), the
expected outputs its ``efc_KBIP``, ``efc_R``, ``qacc`` and ``efc_force``, with
its Newton solver run to a tolerance of 1e-12.
"""

from __future__ import annotations

import numpy as np
import pytest

from rbd.constraints import impedance as imp
from rbd.constraints import solver_newton as newton_reference
from rbd.constraints import solver_pgs as pgs_reference
from rbd.constraints.solver_newton import ConstraintRows

mujoco = pytest.importorskip("mujoco", reason="MuJoCo is the peer for the constraint model")

#: Accelerations and forces: both solvers converge to the unique minimizer; MuJoCo, with
#: tolerance 1e-15 and line-search tolerance 1e-12, agrees with it to ~1e-11 relative.
RTOL_SOLVE = 1e-8
#: Impedance, stiffness, damping, aref: the same closed forms (powers, one division).
RTOL_FORMULA = 1e-12
#: Kernel against reference: the same iterations in another evaluation order (Cholesky
#: where the reference calls LU); observed 1e-16 (qacc) to 5e-14 (forces).
RTOL_TWINS = 1e-10


def _solvers(backend):
    """The Newton and PGS modules of a backend (the compiled twins, or the readable ones)."""
    if backend == "kernel":
        from rbd._kernels import solver_newton, solver_pgs

        return solver_newton, solver_pgs
    return newton_reference, pgs_reference

SCENE = """
<mujoco>
  <option cone="{cone}" solver="Newton" tolerance="1e-15" iterations="1000" ls_iterations="100"
          ls_tolerance="1e-12"
          jacobian="dense" impratio="{impratio}" timestep="0.002"/>
  <worldbody>
    <geom type="plane" size="5 5 .1" friction="0.8 0.02 0.002"/>
    <body pos="0 0 0.095"><freejoint/>
      <geom type="box" size=".2 .15 .1" condim="3" solref="0.015 0.9"
            solimp="0.85 0.97 0.002 0.4 3"/>
    </body>
    <body pos="0.6 0 0.115"><freejoint/>
      <geom type="sphere" size=".12" condim="6" solref="-5000 -80"/>
    </body>
    <body pos="-0.6 0.2 0.08"><freejoint/>
      <geom type="capsule" size=".08 .2" euler="0 90 0" condim="4" friction="0.5 0.05 0.01"/>
    </body>
    <body pos="0 -0.6 0.048"><freejoint/>
      <geom type="box" size=".05 .05 .05" condim="1" priority="1"/>
    </body>
    <body pos="0 1 0.5">
      <joint name="hinge" type="hinge" axis="0 1 0" range="-20 20" frictionloss="0.3"/>
      <geom type="capsule" size=".05 .3" fromto="0 0 0 0.3 0 -0.3"/>
    </body>
  </worldbody>
</mujoco>
"""


def _scene(cone, impratio=1.0, seed=0):
    m = mujoco.MjModel.from_xml_string(SCENE.format(cone=cone, impratio=impratio))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(seed)
    d.qvel[:] = rng.normal(scale=0.3, size=m.nv)
    d.qpos[-1] = np.deg2rad(25)                       # beyond the hinge's range
    mujoco.mj_forward(m, d)
    return m, d


def _rows(m, d):
    nv, nefc = m.nv, d.nefc
    cones = tuple((c.efc_address, int(c.dim), float(c.mu), np.array(c.friction))
                  for c in d.contact[:d.ncon]
                  if c.efc_address >= 0 and c.dim > 1
                  and d.efc_type[c.efc_address] == mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC)
    return ConstraintRows(J=d.efc_J[:nefc * nv].reshape(nefc, nv).copy(), aref=d.efc_aref.copy(),
                          D=d.efc_D.copy(), R=d.efc_R.copy(), ne=int(d.ne), nf=int(d.nf),
                          frictionloss=d.efc_frictionloss.copy(), cones=cones)


def _mass(m, d):
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    return M


def _mujoco_scale(m):
    """MuJoCo's scale of the Newton stopping quantities, 1 / (meaninertia max(1, nv))."""
    return 1.0 / (m.stat.meaninertia * max(1, m.nv))


def _assert_rel(got, want, rtol):
    assert np.linalg.norm(got - want) <= rtol * max(1.0, np.linalg.norm(want)), (got, want)


STATES = [(cone, seed) for cone in ("pyramidal", "elliptic") for seed in range(4)]


@pytest.mark.parametrize(("cone", "seed"), STATES)
def test_newton_matches_mujoco(cone, seed, backend):
    m, d = _scene(cone, impratio=1.0 + seed, seed=seed)
    assert d.ncon >= 6 and d.nf == 1 and d.nefc > 15
    assert mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT in d.efc_type[:d.nefc]
    newton, _ = _solvers(backend)
    # MuJoCo's stopping rule and settings: its tolerance, scaled by its meaninertia
    qacc, force = newton.solve_newton(_mass(m, d), d.qacc_smooth.copy(), _rows(m, d),
                                      tolerance=m.opt.tolerance, scale=_mujoco_scale(m))
    _assert_rel(qacc, d.qacc, RTOL_SOLVE)
    _assert_rel(force, d.efc_force, RTOL_SOLVE)


@pytest.mark.slow
@pytest.mark.parametrize(("cone", "seed"), STATES[::2])
def test_pgs_matches_mujoco(cone, seed, backend):
    m, d = _scene(cone, impratio=1.0 + seed, seed=seed)
    _, pgs = _solvers(backend)
    qacc, force = pgs.solve_pgs(_mass(m, d), d.qacc_smooth.copy(), _rows(m, d),
                                iterations=5000, tolerance=1e-13)
    _assert_rel(qacc, d.qacc, RTOL_SOLVE)
    _assert_rel(force, d.efc_force, RTOL_SOLVE)


def test_newton_minimizes_the_primal_cost(backend):
    """Any perturbation of the solution raises f (the problem is convex, the minimum unique)."""
    m, d = _scene("elliptic", seed=1)
    M, a0, rows = _mass(m, d), d.qacc_smooth.copy(), _rows(m, d)
    newton, _ = _solvers(backend)
    qacc, _ = newton.solve_newton(M, a0, rows)
    best = newton.primal_cost(M, a0, rows, qacc)
    rng = np.random.default_rng(0)
    for _ in range(20):
        assert newton.primal_cost(M, a0, rows, qacc + 1e-4 * rng.normal(size=m.nv)) > best


@pytest.mark.parametrize(("cone", "seed"), STATES)
def test_compiled_solvers_equal_the_reference(cone, seed, require_kernels):
    """Kernel and reference: the same qacc, forces and cost on MuJoCo's own problems
    (pyramidal and elliptic cones, friction loss, a limit, condim 1/3/4/6)."""
    m, d = _scene(cone, impratio=1.0 + seed, seed=seed)
    M, a0, rows = _mass(m, d), d.qacc_smooth.copy(), _rows(m, d)
    newton, pgs = _solvers("kernel")
    for kernel, reference, options in (
            (newton.solve_newton, newton_reference.solve_newton, {}),
            (pgs.solve_pgs, pgs_reference.solve_pgs, {"iterations": 50})):
        qacc, force = kernel(M, a0, rows, **options)
        qacc_ref, force_ref = reference(M, a0, rows, **options)
        _assert_rel(qacc, qacc_ref, RTOL_TWINS)
        _assert_rel(force, force_ref, RTOL_TWINS)
    rng = np.random.default_rng(seed)
    for a in (a0, a0 + rng.normal(size=m.nv)):       # cost in every zone, not only at the minimum
        assert newton.primal_cost(M, a0, rows, a) == pytest.approx(
            newton_reference.primal_cost(M, a0, rows, a), rel=RTOL_TWINS)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_impedance_stiffness_damping_and_aref_match_mujoco(cone):
    m, d = _scene(cone, seed=2)
    kbip = d.efc_KBIP[:d.nefc].reshape(-1, 4)
    checked = 0
    for c in d.contact[:d.ncon]:
        i = c.efc_address
        if i < 0:
            continue
        solimp = imp.clamp_solimp(c.solimp)
        solref = imp.safe_solref(c.solref, m.opt.timestep)
        d_imp, d_impP = imp.impedance(solimp, d.efc_pos[i], d.efc_margin[i])
        rows = c.dim if cone == "elliptic" else max(1, 2 * (c.dim - 1))
        for j in range(rows):
            friction_row = cone == "elliptic" and j > 0
            k, b = imp.stiffness_damping(solref, solimp[1], friction_row)
            np.testing.assert_allclose([k, b, d_imp, d_impP], kbip[i + j], rtol=RTOL_FORMULA,
                                       atol=1e-300)
            checked += 1
    assert checked >= 10
    aref = imp.reference_acceleration(kbip[:, 0], kbip[:, 1], kbip[:, 2], d.efc_vel[:d.nefc],
                                      d.efc_pos[:d.nefc], d.efc_margin[:d.nefc])
    np.testing.assert_allclose(aref, d.efc_aref[:d.nefc], rtol=RTOL_FORMULA, atol=1e-9)


@pytest.mark.parametrize("impratio", [1.0, 4.0])
def test_contact_regularizers_match_mujoco(impratio):
    """Friction rows' R from the normal row's: elliptic ratios and the pyramid's common R."""
    for cone in ("elliptic", "pyramidal"):
        m, d = _scene(cone, impratio=impratio, seed=3)
        for c in d.contact[:d.ncon]:
            i = c.efc_address
            if i < 0 or c.dim == 1:
                continue
            n = c.dim if cone == "elliptic" else 2 * (c.dim - 1)
            if cone == "elliptic":
                r_normal = d.efc_R[i]
            else:                                      # invert R = 2 mu^2 R0
                r_normal = d.efc_R[i] / (2 * c.mu ** 2)
            R, mu = imp.contact_regularizers(r_normal, c.friction, c.dim, cone, impratio)
            np.testing.assert_allclose(R, d.efc_R[i:i + n], rtol=RTOL_FORMULA)
            assert mu == pytest.approx(c.mu, rel=RTOL_FORMULA)


def test_impedance_shape():
    """The sigmoid: d0 at zero violation, dwidth beyond width, midpoint halfway, flat when equal."""
    solimp = (0.9, 0.95, 0.01, 0.5, 2.0)
    assert imp.impedance(solimp, 0.0, 0.0) == (0.9, 0.0)
    assert imp.impedance(solimp, -0.02, 0.0) == (0.95, 0.0)
    assert imp.impedance(solimp, -0.005, 0.0)[0] == pytest.approx(0.925)
    assert imp.impedance((0.9, 0.9, 0.01, 0.5, 2), -0.005, 0.0) == (0.9, 0.0)
    h = 1e-7
    value, slope = imp.impedance(solimp, -0.003, 0.0)
    above = imp.impedance(solimp, -0.003 + h, 0.0)[0]
    below = imp.impedance(solimp, -0.003 - h, 0.0)[0]
    assert slope == pytest.approx((above - below) / (2 * h), rel=1e-6)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_contact_rows_match_mujoco(cone):
    """efc_J of each contact from its frame and the bodies' Jacobians, condim 1, 3, 4 and 6."""
    from rbd.constraints.contact_rows import contact_rows

    m, d = _scene(cone, seed=1)
    J = d.efc_J[:d.nefc * m.nv].reshape(d.nefc, m.nv)
    dims = set()
    for c in d.contact[:d.ncon]:
        if c.efc_address < 0:
            continue
        jac = []
        for g in c.geom:
            jp, jr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
            mujoco.mj_jac(m, d, jp, jr, c.pos, m.geom_bodyid[g])
            jac.append((jp, jr))
        jacp, jacr = jac[1][0] - jac[0][0], jac[1][1] - jac[0][1]
        rows = contact_rows(c.frame.reshape(3, 3), jacp, jacr, c.dim, c.friction, cone)
        np.testing.assert_allclose(rows, J[c.efc_address:c.efc_address + len(rows)],
                                   rtol=0, atol=1e-12)
        dims.add(int(c.dim))
    assert dims == {1, 3, 4, 6}


def test_contact_rows_refuse_bad_condim():
    from rbd.constraints.contact_rows import contact_rows
    from rbd.errors import InputError

    with pytest.raises(InputError, match="condim"):
        contact_rows(np.eye(3), np.zeros((3, 2)), np.zeros((3, 2)), 2, np.ones(5))
    with pytest.raises(InputError, match="cone"):
        contact_rows(np.eye(3), np.zeros((3, 2)), np.zeros((3, 2)), 3, np.ones(5), "round")


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_solvers_on_the_ant_match_mujoco(cone, backend):
    """gymnasium's ant at states of a MuJoCo run: contacts and joint limits active."""
    gymnasium = pytest.importorskip("gymnasium", reason="gymnasium's ant.xml")
    import os

    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", "ant.xml")
    m = mujoco.MjModel.from_xml_path(path)
    m.opt.cone = getattr(mujoco.mjtCone, f"mjCONE_{cone.upper()}")
    m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE
    m.opt.tolerance, m.opt.ls_tolerance, m.opt.iterations = 1e-15, 1e-12, 1000
    d = mujoco.MjData(m)
    rng = np.random.default_rng(6)
    checked = 0
    for step in range(1000):
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        mujoco.mj_step(m, d)
        if step % 100 != 99:
            continue
        mujoco.mj_forward(m, d)
        if d.ncon == 0:                                # still falling
            continue
        M, a0, rows = _mass(m, d), d.qacc_smooth.copy(), _rows(m, d)
        newton, pgs = _solvers(backend)
        # MuJoCo's Newton settings on both sides
        for solve, options in ((newton.solve_newton, {"tolerance": m.opt.tolerance,
                                                      "scale": _mujoco_scale(m)}),
                               (pgs.solve_pgs, {"iterations": 5000, "tolerance": 1e-13})):
            qacc, force = solve(M, a0, rows, **options)
            _assert_rel(qacc, d.qacc, RTOL_SOLVE)
            _assert_rel(force, d.efc_force, RTOL_SOLVE)
        checked += 1
    assert checked >= 4


def test_regularizer_matches_mujoco_on_unadjusted_rows():
    """R = (1 - d) A/d on rows whose R MuJoCo does not adjust later (normal rows, limits).

    MuJoCo's ``efc_diagA`` after ``mj_makeImpedance`` is ``R d/(1 - d)``, which on these
    rows is the diagonal approximation the row's R came from.
    """
    m, d = _scene("elliptic", seed=2)
    kbip = d.efc_KBIP[:d.nefc].reshape(-1, 4)
    normal_rows = [c.efc_address for c in d.contact[:d.ncon] if c.efc_address >= 0]
    limit_rows = list(np.flatnonzero(d.efc_type[:d.nefc]
                                     == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT))
    assert normal_rows and limit_rows
    for i in normal_rows + limit_rows:
        assert imp.regularizer(kbip[i, 2], d.efc_diagA[i]) == pytest.approx(d.efc_R[i], rel=1e-12)


@pytest.mark.parametrize("cone", ["pyramidal", "elliptic"])
def test_newton_stops_by_mujocos_rule(cone, backend):
    """At MuJoCo's default tolerance (1e-8) with MuJoCo's scale, Newton stops once the scaled
    cost decrease, gradient or Newton decrement is below it: the scaled cost is then within
    the tolerance of the minimum (the tight solve), as MuJoCo's rule promises."""
    m, d = _scene(cone, seed=0)
    M, a0, rows = _mass(m, d), d.qacc_smooth.copy(), _rows(m, d)
    newton, _ = _solvers(backend)
    scale = _mujoco_scale(m)
    loose, _ = newton.solve_newton(M, a0, rows, tolerance=1e-8, scale=scale)
    tight, _ = newton.solve_newton(M, a0, rows, tolerance=1e-15, scale=scale)
    gap = scale * (newton.primal_cost(M, a0, rows, loose) - newton.primal_cost(M, a0, rows, tight))
    assert -1e-15 <= gap < 1e-8
    if cone == "elliptic":            # the cone's curvature: Newton converges, not lands
        assert np.abs(loose - tight).max() > 1e-10


#: The kernel's Newton factor updated row by row, as a factor of the matrix H built anew
#: (backward error ‖L Lᵀ − H‖ / ‖H‖): each rank-one update or downdate rounds at ~1e-16 of
#: the entries it touches, and a downdate keeps at least 10 digits of a pivot
#: (``rank_one.pivot_floor()`` = 1e-6 on its square) before it rebuilds.  Observed ≤ 1e-15 below; a
#: downdate that cancels 10 digits without the rebuild leaves 2e-7.
RTOL_FACTOR = 1e-12


def _factor_error(L, H):
    """‖L Lᵀ − H‖ relative to ‖H‖ (L lower triangular)."""
    assert np.array_equal(L, np.tril(L))
    return np.linalg.norm(L @ L.T - H) / np.linalg.norm(H)


@pytest.mark.parametrize(("cone", "seed"), STATES)
def test_updated_newton_factor_equals_the_rebuilt_one(cone, seed, require_kernels):
    """The factor updated from the rows' state at a₀ to their state at the solution (rows
    entering and leaving the quadratic set, cones in the middle zone) equals the factor of H
    built there (the reference ``hessian_factor``)."""
    m, d = _scene(cone, impratio=1.0 + seed, seed=seed)
    M, a0, rows = _mass(m, d), d.qacc_smooth.copy(), _rows(m, d)
    kernel, _ = _solvers("kernel")
    before, after = rows.J @ a0 - rows.aref, rows.J @ d.qacc - rows.aref
    q0, q1 = (newton_reference.constraint_update(rows, jar)[2] for jar in (before, after))
    assert (q0 != q1).sum() >= 2                 # rows leave (a₀ → qacc) and enter (back)
    if cone == "elliptic":
        assert newton_reference.constraint_update(rows, after)[3]    # cone blocks to add
    for start, end in ((before, after), (after, before)):
        want = newton_reference.hessian_factor(M, rows, end)
        for got in (kernel.hessian_factor(M, rows, end, previous=start),
                    kernel.hessian_factor(M, rows, end)):
            assert _factor_error(got, want @ want.T) <= RTOL_FACTOR


@pytest.mark.parametrize("D", [1e10, 1e17])
def test_a_downdate_that_cancels_a_pivot_rebuilds_the_factor(D, require_kernels):
    """A stiff row (D ≫ M) leaves the quadratic set: the downdate's pivot² is D + 1 − D,
    10 digits lost (D = 1e10) or all of them (1e17: the pivot would be 0, the factor no
    longer positive definite).  The kernel rebuilds, and its factor is that of M + the
    rows still quadratic."""
    M = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.1], [0.0, 0.1, 1.5]])
    J = np.array([[1.0, 0.5, 0.0], [0.0, 1.0, -1.0]])
    rows = ConstraintRows(J=J, aref=np.zeros(2), D=np.array([D, 2.0]), R=1 / np.array([D, 2.0]))
    kernel, _ = _solvers("kernel")
    before, after = np.array([-1.0, -1.0]), np.array([1.0, -1.0])    # row 0 turns satisfied
    got = kernel.hessian_factor(M, rows, after, previous=before)
    assert _factor_error(got, M + 2.0 * np.outer(J[1], J[1])) <= RTOL_FACTOR
    # and back: the stiff row's update is exact to rounding
    got = kernel.hessian_factor(M, rows, before, previous=after)
    H = M + D * np.outer(J[0], J[0]) + 2.0 * np.outer(J[1], J[1])
    assert _factor_error(got, H) <= RTOL_FACTOR


def _tree_factor_error(L, H):
    """‖Lᵀ L − H‖ relative to ‖H‖ (L lower triangular: the factor along the tree)."""
    assert np.array_equal(L, np.tril(L))
    return np.linalg.norm(L.T @ L - H) / np.linalg.norm(H)


@pytest.mark.parametrize(("cone", "seed"), STATES[::3])
def test_newton_along_the_tree_matches_the_dense_solve(cone, seed, require_kernels):
    """Every row of the scene is a contact with the world, a limit or a dof's friction loss:
    its nonzeros lie on one path to the root of MuJoCo's dof tree (``dof_parentid``).  The
    kernel given that tree factors M + Jᵀ D J along it (crba.ltl), then updates the factor
    row by row: the factor (built at one state of the rows and updated to the other, cones
    added) is H's, and the solve MuJoCo's and the dense one's."""
    m, d = _scene(cone, impratio=1.0 + seed, seed=seed)
    M, a0, rows = _mass(m, d), d.qacc_smooth.copy(), _rows(m, d)
    kernel, _ = _solvers("kernel")
    parent = m.dof_parentid.copy()
    before, after = rows.J @ a0 - rows.aref, rows.J @ d.qacc - rows.aref
    for start, end in ((before, after), (after, before)):
        want = newton_reference.hessian_factor(M, rows, end)
        for got in (kernel.hessian_factor(M, rows, end, previous=start, dof_parent=parent),
                    kernel.hessian_factor(M, rows, end, dof_parent=parent)):
            assert not np.allclose(got @ got.T, want @ want.T)     # the other factor's form
            assert _tree_factor_error(got, want @ want.T) <= RTOL_FACTOR
    dense = kernel.solve_newton(M, a0, rows, tolerance=m.opt.tolerance,
                                scale=_mujoco_scale(m))
    tree = kernel.solve_newton(M, a0, rows, tolerance=m.opt.tolerance,
                               scale=_mujoco_scale(m), dof_parent=parent)
    for got, want, peer in zip(tree, dense, (d.qacc, d.efc_force), strict=True):
        _assert_rel(got, want, RTOL_TWINS)
        _assert_rel(got, peer, RTOL_SOLVE)


def test_the_tree_factor_downdates_and_falls_back_to_dense(require_kernels):
    """On a chain (dof_parent −1, 0, 1) the stiff row's downdate along the tree rebuilds as
    the dense one does; on a fork (−1, 0, 0) a row on both branches leaves the tree's
    pattern, and the factor is the dense L Lᵀ (the solve unchanged)."""
    M = np.array([[2.0, 0.3, 0.2], [0.3, 1.0, 0.0], [0.2, 0.0, 1.5]])
    J = np.array([[1.0, 0.0, 0.5], [0.0, 1.0, -1.0]])
    kernel, _ = _solvers("kernel")
    for D in (1e10, 1e17):
        rows = ConstraintRows(J=J[:1], aref=np.zeros(1), D=np.array([D]), R=np.array([1 / D]))
        chain = np.array([-1, 0, 1])
        M_chain = M.copy()
        M_chain[1, 2] = M_chain[2, 1] = 0.1
        got = kernel.hessian_factor(M_chain, rows, np.array([1.0]), previous=np.array([-1.0]),
                                    dof_parent=chain)
        assert _tree_factor_error(got, M_chain) <= RTOL_FACTOR
    rows = ConstraintRows(J=J, aref=np.array([-1.0, 2.0]), D=np.array([3.0, 2.0]),
                          R=np.array([1 / 3, 0.5]))
    fork = np.array([-1, 0, 0])
    jar = np.array([-1.0, -1.0])
    got = kernel.hessian_factor(M, rows, jar, dof_parent=fork)
    H = M + J.T @ np.diag([3.0, 2.0]) @ J
    assert got[2, 1] != 0.0 and _factor_error(got, H) <= RTOL_FACTOR
    a0 = np.array([0.5, -1.0, 0.25])
    for got, want in zip(kernel.solve_newton(M, a0, rows, dof_parent=fork),
                         newton_reference.solve_newton(M, a0, rows), strict=True):
        _assert_rel(got, want, RTOL_TWINS)
    with pytest.raises(ValueError, match="dof_parent"):
        kernel.solve_newton(M, a0, rows, dof_parent=np.array([-1, 1, 0]))
