"""Parametric curves and surfaces: derivatives, frames (GL §5, Pai §6), curvature, sympy."""

import numpy as np
import pytest
import sympy
from helpers import RTOL_EXACT

import rbd
from rbd import geometry as geo
from rbd.testing import random_rotation

#: Central differences with step H_FD: truncation O(H²) ~ 1e-10 relative, rounding
#: O(eps/H) ~ 1e-11 on O(1) quantities; second differences O(eps/H²) ~ 1e-8.
H_FD = 1e-5
TOL_FD1 = 1e-7
TOL_FD2 = 1e-5


def _bezier(rng):
    g = np.linspace(-1.0, 1.0, 4)
    X, Y = np.meshgrid(g, g, indexing="ij")
    Z = 0.3 * X**2 - 0.2 * X * Y + 0.5 * Y**2 + 0.05 * rng.normal(size=(4, 4))
    P = np.stack([X, Y, Z], axis=-1) + 0.03 * rng.normal(size=(4, 4, 3))
    return geo.BezierPatch(P)


def surfaces():
    """Named surfaces with a sampler of interior parameter points."""
    rng = np.random.default_rng(7)
    R = random_rotation(rng)
    return {
        "plane": geo.Plane((0.1, 0.2, 0.3), (1.0, 0.2, 0.0), (0.1, 1.0, 0.3)),
        "sphere": geo.Sphere(0.7),
        "ellipsoid": geo.Ellipsoid(0.5, 0.8, 0.3),
        "torus": geo.Torus(1.0, 0.3),
        "bezier": _bezier(rng),
        "moved sphere": geo.Sphere(0.7).transformed(R, (0.3, -0.2, 0.5)),
        "flipped ellipsoid": geo.Ellipsoid(0.5, 0.8, 0.3).flipped(),
    }


SURFACES = surfaces()


def interior_points(surface, rng, n=4):
    """Parameters well inside the chart (away from poles and patch edges)."""
    out = []
    for _ in range(n):
        uv = []
        for lo, hi in surface.domain:
            lo, hi = (max(lo, -1.2), min(hi, 1.2))
            uv.append(rng.uniform(lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo)))
        out.append(tuple(uv))
    return out


def fd(f, x, h=H_FD):
    return (f(x + h) - f(x - h)) / (2 * h)


def fd_uv(f, u, v, h=H_FD):
    """Central differences ``(∂f/∂u, ∂f/∂v)`` of ``f(u, v)``."""
    return ((f(u + h, v) - f(u - h, v)) / (2 * h), (f(u, v + h) - f(u, v - h)) / (2 * h))


# --- surfaces: derivatives ---------------------------------------------------


@pytest.mark.parametrize("name", SURFACES)
def test_surface_partials_match_finite_differences(name):
    surface = SURFACES[name]
    rng = np.random.default_rng(1)
    for u, v in interior_points(surface, rng):
        d = surface.partials(u, v, order=3)
        assert set(d) == {(i, j) for i in range(4) for j in range(4) if i + j <= 3}
        for (i, j), value in d.items():
            if i > 0:  # differentiate the (i-1, j) partial in u
                ref = fd_uv(lambda uu, vv, i=i, j=j: surface.partials(uu, vv, 3)[i - 1, j],
                            u, v)[0]
            elif j > 0:
                ref = fd_uv(lambda uu, vv, i=i, j=j: surface.partials(uu, vv, 3)[i, j - 1],
                            u, v)[1]
            else:
                continue
            scale = max(1.0, np.abs(ref).max())
            assert np.abs(value - ref).max() <= TOL_FD1 * scale, (name, i, j)


@pytest.mark.parametrize("name", SURFACES)
def test_surface_frame_is_orthonormal_and_matches_pai(name):
    """Columns x̂, ŷ, n as in Pai §6: x̂ ∥ c_s, ŷ the Gram–Schmidt of c_t, n ∥ c_s × c_t."""
    surface = SURFACES[name]
    for u, v in interior_points(surface, np.random.default_rng(2)):
        E = surface.frame(u, v)
        R = E[:3, :3]
        assert np.allclose(R.T @ R, np.eye(3), atol=RTOL_EXACT)
        assert np.linalg.det(R) == pytest.approx(1.0, abs=RTOL_EXACT)
        assert np.allclose(E[3], [0, 0, 0, 1])
        cs, ct = surface.tangents(u, v)
        y = (cs @ cs) * ct - (cs @ ct) * cs  # Pai §6, ¹y before normalisation
        z = np.cross(cs, ct)
        assert np.allclose(R[:, 0], cs / np.linalg.norm(cs), atol=RTOL_EXACT)
        assert np.allclose(R[:, 1], y / np.linalg.norm(y), atol=RTOL_EXACT)
        assert np.allclose(R[:, 2], z / np.linalg.norm(z), atol=RTOL_EXACT)
        assert np.allclose(E[:3, 3], surface.position(u, v), atol=RTOL_EXACT)


@pytest.mark.parametrize("name", SURFACES)
def test_frame_jet_matches_finite_differences(name):
    surface = SURFACES[name]
    rng = np.random.default_rng(3)
    for u, v in interior_points(surface, rng, n=2):
        du, dv = rng.normal(size=2)
        E, Ed, Edd = surface.frame_jet(u, v, du, dv)
        h = 1e-4  # second differences: truncation ~h², rounding ~eps/h² ~ 1e-8
        Ep, Em = surface.frame(u + h * du, v + h * dv), surface.frame(u - h * du, v - h * dv)
        assert np.allclose(E, surface.frame(u, v), atol=RTOL_EXACT)
        assert np.abs(Ed - (Ep - Em) / (2 * h)).max() < TOL_FD2
        assert np.abs(Edd - (Ep - 2 * E + Em) / h**2).max() < 1e-5 * max(1, np.abs(Edd).max())


# --- surfaces: curvature --------------------------------------------------------


@pytest.mark.parametrize("name", SURFACES)
def test_weingarten_equation(name):
    """n_{,j} = -Σ_k x_{,k} S_kj: checks the shape operator against the normal's FD."""
    surface = SURFACES[name]
    for u, v in interior_points(surface, np.random.default_rng(4), n=3):
        S = surface.shape_operator(u, v)
        xu, xv = surface.tangents(u, v)
        n_u, n_v = fd_uv(surface.normal, u, v)
        assert np.allclose(n_u, -(xu * S[0, 0] + xv * S[1, 0]), atol=TOL_FD1)
        assert np.allclose(n_v, -(xu * S[0, 1] + xv * S[1, 1]), atol=TOL_FD1)


@pytest.mark.parametrize("name", SURFACES)
def test_montana_forms_describe_the_frame_motion(name):
    """[x̂ ŷ]ᵀ ∂n = K M and ŷ·∂x̂ = T M (module notes), from FD of the frame."""
    surface = SURFACES[name]
    for u, v in interior_points(surface, np.random.default_rng(5), n=3):
        M, K, T = surface.contact_geometry(u, v)
        R = surface.rotation(u, v)
        dR = fd_uv(surface.rotation, u, v)
        dn = np.column_stack([R[:, :2].T @ dRk[:, 2] for dRk in dR])
        dx = np.array([R[:, 1] @ dRk[:, 0] for dRk in dR])
        assert np.allclose(dn, K @ M, atol=TOL_FD1)
        assert np.allclose(dx, (T @ M).ravel(), atol=TOL_FD1)
        xu, xv = surface.tangents(u, v)
        assert np.allclose(R[:, :2] @ M, np.column_stack([xu, xv]), atol=RTOL_EXACT)


def test_curvatures_of_quadrics_and_torus():
    rng = np.random.default_rng(6)
    r = 0.7
    sphere = geo.Sphere(r)
    a, b, c = 0.5, 0.8, 0.3
    ellipsoid = geo.Ellipsoid(a, b, c)
    R, rho = 1.0, 0.3
    torus = geo.Torus(R, rho)
    for _ in range(5):
        u, v = rng.uniform(-1.2, 1.2, 2)
        assert sphere.gaussian_curvature(u, v) == pytest.approx(1 / r**2, rel=RTOL_EXACT)
        assert sphere.mean_curvature(u, v) == pytest.approx(-1 / r, rel=RTOL_EXACT)
        assert np.allclose(sphere.contact_geometry(u, v)[1], np.eye(2) / r, atol=RTOL_EXACT)
        x, y, z = ellipsoid.position(u, v)
        K_ell = 1 / (a * b * c * (x**2 / a**4 + y**2 / b**4 + z**2 / c**4)) ** 2
        assert ellipsoid.gaussian_curvature(u, v) == pytest.approx(K_ell, rel=1e-9)
        k = torus.principal_curvatures(u, v)
        expected = np.sort([-1 / rho, -np.cos(v) / (R + rho * np.cos(v))])
        assert np.allclose(k, expected, atol=1e-9)
        plane = SURFACES["plane"]
        assert np.allclose(plane.second_fundamental_form(u, v), 0.0)


def test_flipped_and_transformed():
    rng = np.random.default_rng(8)
    base = geo.Ellipsoid(0.5, 0.8, 0.3)
    R, p = random_rotation(rng), np.array([0.1, 0.2, -0.3])
    moved, flipped = base.transformed(R, p), base.flipped()
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    u, v = 0.4, -0.3
    assert np.allclose(moved.frame(u, v), T @ base.frame(u, v), atol=RTOL_EXACT)
    assert np.allclose(flipped.normal(v, u), -base.normal(u, v), atol=RTOL_EXACT)
    assert np.allclose(flipped.position(v, u), base.position(u, v), atol=RTOL_EXACT)
    assert flipped.domain == (base.domain[1], base.domain[0])


# --- Bézier patches -------------------------------------------------------------------


def test_bezier_patch_with_grid_control_points_is_the_plane():
    """Linear precision: an evenly spaced planar grid gives x = o + u e1 + v e2 exactly."""
    o, e1, e2 = np.array([0.2, -0.1, 0.4]), np.array([1.0, 0.3, -0.2]), np.array([0.1, 0.8, 0.5])
    g = np.arange(4) / 3
    P = o + g[:, None, None] * e1 + g[None, :, None] * e2
    patch = geo.BezierPatch(P)
    plane = geo.Plane(o, e1, e2)
    rng = np.random.default_rng(9)
    for u, v in rng.uniform(0, 1, (5, 2)):
        assert np.allclose(patch.frame(u, v), plane.frame(u, v), atol=RTOL_EXACT)
        assert np.allclose(patch.second_fundamental_form(u, v), 0.0, atol=RTOL_EXACT)


def test_bezier_patch_with_scattered_planar_control_points_stays_in_the_plane():
    rng = np.random.default_rng(10)
    n = np.array([0.3, -0.4, 0.866])
    n /= np.linalg.norm(n)
    e1 = np.cross(n, [1.0, 0.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    g = np.arange(4) / 3
    ab = np.stack(np.meshgrid(g, g, indexing="ij"), axis=-1) + 0.05 * rng.normal(size=(4, 4, 2))
    P = 0.5 * n + ab[..., :1] * e1 + ab[..., 1:] * e2
    patch = geo.BezierPatch(P)
    for u, v in rng.uniform(0, 1, (5, 2)):
        assert patch.position(u, v) @ n == pytest.approx(0.5, abs=RTOL_EXACT)
        assert np.allclose(patch.normal(u, v), n, atol=RTOL_EXACT)  # e1 × e2 = n
        assert patch.gaussian_curvature(u, v) == pytest.approx(0.0, abs=RTOL_EXACT)


def test_bezier_patch_reproduces_a_paraboloid_by_degree_elevation():
    """z = a x² + b y² is bicubic: heights a w² (1, -1/3, -1/3, 1) ⊕ b w² (...)."""
    a, b, w = 0.6, 0.9, 0.5
    c = np.array([1.0, -1 / 3, -1 / 3, 1.0])
    patch = geo.BezierPatch.from_heights(a * w**2 * c[:, None] + b * w**2 * c[None, :], w)
    for u, v in np.random.default_rng(11).uniform(0, 1, (5, 2)):
        x, y, z = patch.position(u, v)
        assert x == pytest.approx(w * (2 * u - 1)) and y == pytest.approx(w * (2 * v - 1))
        assert z == pytest.approx(a * x**2 + b * y**2, abs=RTOL_EXACT)
    # at the apex, the curvature is the paraboloid's: principal 2a, 2b (normal +z: positive)
    assert np.allclose(patch.principal_curvatures(0.5, 0.5), [2 * a, 2 * b], atol=RTOL_EXACT)


def test_bernstein_derivatives_match_finite_differences():
    for t in (0.0, 0.3, 0.8, 1.0):
        assert sum(geo.bernstein3(t)) == pytest.approx(1.0)
        for k in (1, 2, 3):
            ref = fd(lambda s, k=k: np.array(geo.bernstein3(s, k - 1)), t)
            assert np.allclose(geo.bernstein3(t, k), ref, atol=TOL_FD1 * 20)


# --- curves ----------------------------------------------------------------------


def curves():
    rng = np.random.default_rng(12)
    return {
        "helix": geo.Helix(0.8, 0.3),
        "circle": geo.Circle(1.5),
        "line": geo.Line((0.1, 0.2, 0.3), (1.0, -1.0, 0.5)),
        "bezier": geo.CubicBezier(rng.normal(size=(4, 3))),
        "spline": geo.BezierSpline.interpolate(rng.normal(size=(5, 3)), closed=True),
    }


CURVES = curves()


@pytest.mark.parametrize("name", CURVES)
def test_curve_derivatives_and_frenet_frame(name):
    curve = CURVES[name]
    lo, hi = curve.domain
    lo, hi = max(lo, -2.0), min(hi, 2.0)
    for s in np.linspace(lo + 0.05, hi - 0.05, 5):
        if name == "spline" and abs(s - round(s)) < 2 * H_FD:
            continue
        x = curve.derivatives(s)
        for k in (1, 2, 3):
            ref = fd(lambda t, k=k: curve.derivatives(t)[k - 1], s)
            assert np.allclose(x[k], ref, atol=TOL_FD1 * max(1, np.abs(ref).max())), (name, k)
        E = curve.frame(s)
        assert np.allclose(E[:3, :3].T @ E[:3, :3], np.eye(3), atol=RTOL_EXACT)
        assert np.linalg.det(E[:3, :3]) == pytest.approx(1.0)
        assert np.allclose(E[:3, 0], x[1] / np.linalg.norm(x[1]), atol=RTOL_EXACT)
        if name == "line":
            continue
        # Frenet–Serret: T' = κ|x'| N and B' = -τ|x'| N
        T, N, B = curve.frenet(s)
        speed, kappa, tau = curve.speed(s), curve.curvature(s), curve.torsion(s)
        assert np.allclose(fd(lambda t: curve.frenet(t)[0], s), kappa * speed * N, atol=1e-6)
        assert np.allclose(fd(lambda t: curve.frenet(t)[2], s), -tau * speed * N, atol=1e-6)


def test_helix_and_circle_curvature_closed_forms():
    r, h = 0.8, 0.3
    helix = geo.Helix(r, h)
    assert helix.curvature(0.4) == pytest.approx(r / (r**2 + h**2), rel=RTOL_EXACT)
    assert helix.torsion(0.4) == pytest.approx(h / (r**2 + h**2), rel=RTOL_EXACT)
    circle = geo.Circle(1.5)
    assert circle.curvature(1.0) == pytest.approx(1 / 1.5)
    assert circle.torsion(1.0) == pytest.approx(0.0)
    assert np.allclose(circle.frenet(1.0)[2], [0, 0, 1])


def test_interpolating_spline_is_c2_and_closes():
    rng = np.random.default_rng(13)
    pts = rng.normal(size=(6, 3))
    for closed in (False, True):
        spline = geo.BezierSpline.interpolate(pts, closed=closed)
        for i, p in enumerate(pts):
            assert np.allclose(spline.position(float(i)), p, atol=RTOL_EXACT)
        for k in range(1, spline.nseg):
            left = spline.segment(k - 1).derivatives(1.0)
            right = spline.segment(k).derivatives(0.0)
            for order in (0, 1, 2):
                assert np.allclose(left[order], right[order], atol=1e-9)
    end = spline.segment(spline.nseg - 1).derivatives(1.0)
    start = spline.segment(0).derivatives(0.0)
    for order in (0, 1, 2):
        assert np.allclose(end[order], start[order], atol=1e-9)


# --- sympy backend -----------------------------------------------------------------


def at(expr, values):
    """Evaluate a sympy matrix at numeric symbol values (xreplace: fast on large trees)."""
    return np.array(expr.xreplace({k: sympy.Float(x) for k, x in values.items()}), dtype=float)



@pytest.mark.slow
@pytest.mark.parametrize("name", SURFACES)
def test_sympy_surface_frame_agrees_with_numpy(name):
    surface = SURFACES[name]
    u, v = sympy.symbols("u v", real=True)
    E = surface.frame(u, v)
    assert isinstance(E, sympy.MatrixBase) and E.shape == (4, 4)
    for uu, vv in interior_points(surface, np.random.default_rng(14), n=2):
        assert np.allclose(at(E, {u: uu, v: vv}), surface.frame(uu, vv), atol=RTOL_EXACT)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sphere", "torus", "moved sphere", "flipped ellipsoid"])
def test_sympy_curvature_forms_agree_with_numpy(name):
    surface = SURFACES[name]
    u, v = sympy.symbols("u v", real=True)
    M, K, T = surface.contact_geometry(u, v)
    S = surface.shape_operator(u, v)
    uu, vv = interior_points(surface, np.random.default_rng(15), n=1)[0]
    for sym, num in zip((M, K, T, S), (*surface.contact_geometry(uu, vv),
                                       surface.shape_operator(uu, vv)), strict=True):
        assert np.allclose(at(sym, {u: uu, v: vv}), num, atol=1e-9)


@pytest.mark.slow
def test_symbolic_shape_parameters():
    """A symbolic radius turns the sympy backend on even at numeric parameters."""
    r, u, v = sympy.symbols("r u v", positive=True)
    sphere = geo.Sphere(r)
    K = sympy.simplify(sphere.gaussian_curvature(u, v))
    assert sympy.simplify(K - 1 / r**2) == 0
    E = sphere.frame(0.3, 0.2)
    assert isinstance(E, sympy.MatrixBase)
    assert np.allclose(np.array(E.subs(r, 0.7), dtype=float), geo.Sphere(0.7).frame(0.3, 0.2))


@pytest.mark.slow
@pytest.mark.parametrize("name", CURVES)
def test_sympy_curve_frame_agrees_with_numpy(name):
    curve = CURVES[name]
    s = sympy.Symbol("s", real=True)
    C = curve.frame(s)
    for ss in (0.15, 0.6, 2.4 if name == "spline" else 0.9):
        assert np.allclose(at(C, {s: ss}), curve.frame(ss), atol=RTOL_EXACT)


def test_lib_argument_forces_the_backend():
    E = geo.Torus(1.0, 0.3).frame(0.2, 0.1, lib=sympy)
    assert isinstance(E, sympy.MatrixBase)
    assert isinstance(geo.Helix().frame(0.2, lib="numpy"), np.ndarray)


# --- bad input -----------------------------------------------------------------------


def test_bad_input_raises_named_errors():
    P = np.zeros((4, 3, 3))
    with pytest.raises(rbd.InputError, match=r"control_points must have shape \(4, 4, 3\)"):
        geo.BezierPatch(P)
    assert np.all(P == 0)
    with pytest.raises(rbd.InputError, match="must not be parallel"):
        geo.Plane(e1=(1, 0, 0), e2=(2, 0, 0))
    with pytest.raises(rbd.InputError, match="order must be 0..3"):
        geo.Sphere().partials(0.1, 0.2, order=4)
    with pytest.raises(rbd.InputError, match="lib must be"):
        geo.Sphere().frame(0.1, 0.2, lib="torch")
    with pytest.raises(rbd.InputError, match="proper rotation"):
        geo.Sphere().transformed(np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(rbd.InputError, match=r"shape \(3k\+1, 3\)"):
        geo.BezierSpline(np.zeros((5, 3)))
    with pytest.raises(rbd.InputError, match="must be finite"):
        geo.CubicBezier([[0, 0, 0], [1, 0, 0], [2, np.nan, 0], [3, 0, 0]])
    with pytest.raises(rbd.InputError, match="3-vector"):
        geo.Line(direction=(1.0, 0.0))


# --- one Bézier family of any degree -------------------------------------------------


def test_cubic_members_belong_to_the_one_bezier_family():
    from rbd.symbolic import frames

    assert issubclass(geo.CubicBezier, geo.BezierCurve)
    assert issubclass(geo.BezierPatch, geo.BezierSurface)
    assert frames.BezierCurve is geo.BezierCurve and frames.BezierSurface is geo.BezierSurface
    assert frames.bernstein is geo.bernstein


def test_bernstein3_is_the_derivative_of_the_cubic_bernstein_basis():
    """The hodograph formula against sympy's differentiation of B_i^3 (exact, rational t)."""
    t = sympy.Symbol("t")
    for k in range(5):
        exact = [sympy.diff(b, t, k) for b in geo.bernstein(3, t)]
        for value in (sympy.Rational(0), sympy.Rational(2, 7), sympy.Rational(1)):
            got = geo.bernstein3(value, k)
            assert [sympy.nsimplify(g) for g in got] == [e.subs(t, value) for e in exact]


def test_bezier_with_symbolic_control_points_is_the_numeric_curve_after_substitution():
    """Degree 4 with one symbolic control point; derivatives past the degree vanish."""
    a = sympy.Symbol("a", real=True)
    P = np.random.default_rng(16).normal(size=(5, 3))
    curve = geo.BezierCurve([list(P[0]), list(P[1]), [a, P[2, 1], P[2, 2]], list(P[3]),
                             list(P[4])])
    numeric = geo.BezierCurve(P)
    for s in (0.0, 0.4, 1.0):
        for k, d in enumerate(curve.derivatives(s, 3)):
            assert np.allclose(np.array(d.subs(a, P[2, 0]), dtype=float).ravel(),
                               numeric.derivatives(s, 3)[k], atol=RTOL_EXACT)
    line = geo.BezierCurve([[0, 0, 0], [1, 2, 3]])
    assert np.array_equal(line.derivatives(0.3, 3)[2:], np.zeros((2, 3)))
    assert all(d == sympy.zeros(3, 1) for d in line.derivatives(sympy.Symbol("s"), 3)[2:])


def test_bezier_surface_power_form_matches_bernstein_form():
    """Degree (2, 3): sympy power form at numbers against the numeric hodographs."""
    patch = geo.BezierSurface(np.random.default_rng(17).normal(size=(3, 4, 3)))
    u, v = sympy.symbols("u v", real=True)
    d_sym = patch.partials(u, v, 3)
    for uu, vv in [(0.2, 0.9), (0.7, 0.3)]:
        d = patch.partials(uu, vv, 3)
        for key in d:
            assert np.allclose(at(d_sym[key], {u: uu, v: vv}).ravel(), d[key], atol=RTOL_EXACT)
