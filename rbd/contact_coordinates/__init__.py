r"""Two smooth rigid bodies in contact, simulated in contact coordinates (Pai §6).

Body 1 and body 2 each carry a parametric surface (:mod:`rbd.geometry`)
whose normal points out of the body.  While they touch at one point the
relative configuration is fixed by five *contact coordinates*

.. math:: q = (u_1^T,\ u_2^T,\ \psi)^T,

the surface parameters of the contact point on each body and the angle
:math:`\psi` between the two contact frames about the common normal.  The
contact frames are the surface frames of :meth:`rbd.geometry.Surface.frame`
(Pai's frames ``1c`` and ``2c``); they share their origin and are related by
the rotation :math:`R_\psi` (Pai, the matrix :math:`{}^{1c}_{2c}E` after Fig. 2),
so the pose of body 2 in frame 1 is

.. math:: {}^1_2E = {}^1_{1c}E(u_1)\;{}^{1c}_{2c}E(\psi)\;{}^{2}_{2c}E(u_2)^{-1}.

Differentiating gives the contact matrices (Pai Eqs. 9–12)

.. math::

    {}^{1c}\phi(1, 1c) = H_1\dot u_1,\qquad
    {}^{1c}H_2 = \operatorname{diag}(R_\psi, R_\psi)\,{}^{2c}H_2,\qquad
    {}^{1c}\phi(1c, 2c) = H_\psi\dot\psi,

    {}^{1c}\phi(1, 2) = H\dot q,\qquad H = [H_1,\ -{}^{1c}H_2,\ H_\psi],

with :math:`H_\psi = (0, 0, -1, 0, 0, 0)^T`.  (Pai's Eq. 12 prints
:math:`-H_\psi`; with :math:`R_\psi` and Eq. 11 as printed, the relative
twist of the contact frames is :math:`+H_\psi\dot\psi`, which is what the
finite-difference tests confirm.)  Each :math:`H_k` has Montana's closed form
in the metric :math:`M_k`, curvature form :math:`K_k` and torsion form
:math:`T_k` (:meth:`rbd.geometry.Surface.contact_geometry`):

.. math::

    H_k = \begin{bmatrix} J K_k M_k \\ T_k M_k \\ M_k \\ 0 \end{bmatrix},
    \qquad J = \begin{bmatrix} 0 & -1 \\ 1 & 0 \end{bmatrix}.

Frictionless dynamics (Pai Eqs. 13–14) follow by block elimination of the
augmented system: the contact wrench ``f`` on body 2 satisfies
:math:`H^T f = 0`, so :math:`H^T M H\,\ddot q = H^T(f_{ext} + [\phi]^T M\phi
- M\dot H\dot q)`, and back-substitution gives ``f``, a pure normal force
:math:`\lambda` through the contact point.  Contact holds while
:math:`\lambda \ge 0`; :func:`simulate` stops with a ``"separation"`` event
where :math:`\lambda` would turn negative.

Conventions are those of :mod:`rbd.spatial`: twists ``[ω; v]``, wrenches
``[n; f]``, spatial inertias about the body origin.  Pai's adjoint
:math:`{}^j_i\mathrm{Ad}` of a pose :math:`{}^j_iE` is :func:`Ad`; Pai's
:math:`[\phi]^T` is ``-crf(φ)``.  Body 1 is either fixed (``inertia1=None``;
Pai's setup with the labels of the bodies exchanged, so that :math:`\phi(1, 2)`
is the motion of the free body) or free-floating, in which case the pair is
the two-body chain of Pai §5 and is solved by the articulated-body
elimination.
"""

from . import pair as _pair
from . import simulation as _simulation
from .pair import (  # noqa: F401  (re-exported: see __all__ below)
    H_PSI,
    Ad,
    ContactDynamics,
    ContactJacobians,
    ContactPair,
    ContactState,
    R_psi,
    frame_jacobian,
)
from .simulation import ContactEvent, ContactTrajectory, simulate  # noqa: F401

__all__ = [*_pair.__all__, *_simulation.__all__, "H_PSI"]
