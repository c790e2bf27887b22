"""rbd.plotting.plot_contacts: the contacts of a contact run drawn over time."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import rbd  # noqa: E402
from rbd.plotting import plot_contacts  # noqa: E402

#: A 0.3 kg cylinder standing on a box: four contacts on its bottom cap at rest.
CAN = """<mujoco><option timestep="0.002"/><worldbody>
  <geom type="box" size="0.5 0.5 0.1"/>
  <body pos="0 0 0.3"><freejoint/><geom type="cylinder" size="0.05 0.15" mass="0.3"/></body>
</worldbody></mujoco>"""


@pytest.mark.single_pass        # the drawing; the forces are the contact run's (tested there)
def test_a_resting_can_carries_its_weight_on_the_plot():
    model = rbd.load_mjcf(CAN)
    traj = rbd.simulate(model, [0, 0, 0.3, 1, 0, 0, 0], np.zeros(6), 1.0, 0.002,
                        integrator="euler")
    fig = plot_contacts(traj)
    top, bottom = fig.axes
    count, force = top.lines[0].get_ydata(), bottom.lines[0].get_ydata()
    np.testing.assert_array_equal(count, traj.contact_count)
    assert count[0] == 0 and count[-1] == 4              # it falls 0.05 m, then stands
    # standing, the normal forces (vertical: the box's top face) carry the weight m g on
    # average: over a window of length T, |mean(F) - m g| = m |Δv_z| / T <= 2 m max|v| / T.
    # (The four points a cap keeps shift from step to step, in MuJoCo as here: the can
    # chatters at ~1e-3 m/s and single samples of F are off m g by up to 1e-3 of it.)
    window = traj.t >= 0.5
    speed = np.abs(traj.v[window, 3:]).max()             # rbd's free v is [ω; u]
    span = traj.t[window][-1] - traj.t[window][0]
    assert abs(force[window].mean() - 0.3 * 9.81) <= 2 * 0.3 * speed / span
    plt.close(fig)


@pytest.mark.single_pass
def test_a_batch_draws_one_line_per_rollout_and_a_plain_run_is_refused():
    model = rbd.load_mjcf(CAN)
    q0 = np.array([[0, 0, 0.3, 1, 0, 0, 0], [0, 0, 0.4, 1, 0, 0, 0]], float)
    batch = rbd.simulate(model, q0, np.zeros((2, 6)), 0.3, 0.002, integrator="euler")
    fig = plot_contacts(batch)
    assert len(fig.axes[0].lines) == len(fig.axes[1].lines) == 2
    np.testing.assert_array_equal(fig.axes[0].lines[1].get_ydata(), batch.contact_count[1])
    plt.close(fig)
    plain = rbd.simulate(rbd.models.double_pendulum(), [0.5, 0.0], [0.0, 0.0], 0.1, 0.01)
    with pytest.raises(rbd.InputError, match="needs a contact run"):
        plot_contacts(plain)
