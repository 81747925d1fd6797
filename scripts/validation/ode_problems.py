"""The test-set problems for scipy, written from their published
definitions (Bari Test Set for IVP Solvers, Mazzia and Magherini, release
2.4, 2008: hires.f, rober.f, orego.f, vdpol.f, pollu.f; Verwer 1994 for POLLU),
with analytic Jacobians, and the published reference end states (RADAU in
extended precision). Initial states, end times and POLLU's rate constants
are checked against Solvent's built-ins (`ode_wp PROBLEM describe`) before
any run, so both solve the same problem."""
import numpy as np

# Bari reference solutions at the end time (also tests/ode/test_testset.c).
REFERENCE = {
    "rober": [0.2083340149701255e-07, 0.8333360770334713e-13, 0.9999999791665050e+00],
    "hires": [0.7371312573325668e-3, 0.1442485726316185e-3, 0.5888729740967575e-4, 0.1175651343283149e-2,
              0.2386356198831331e-2, 0.6238968252742796e-2, 0.2849998395185769e-2, 0.2850001604814231e-2],
    "vdpol": [0.1706167732170483e+01, -0.8928097010247975e+00],
    "orego": [0.1000814870318523e+01, 0.1228178521549917e+04, 0.1320554942846706e+03],
    "pollu": [0.5646255480022769e-01, 0.1342484130422339e+00, 0.4139734331099427e-08, 0.5523140207484359e-02,
              0.2018977262302196e-06, 0.1464541863493966e-06, 0.7784249118997964e-01, 0.3245075353396018e+00,
              0.7494013383880406e-02, 0.1622293157301561e-07, 0.1135863833257075e-07, 0.2230505975721359e-02,
              0.2087162882798630e-03, 0.1396921016840158e-04, 0.8964884856898295e-02, 0.4352846369330103e-17,
              0.6899219696263405e-02, 0.1007803037365946e-03, 0.1772146513969984e-05, 0.5682943292316392e-04],
}


def rober(p):
    k1, k2, k3 = p  # 0.04, 1e4, 3e7

    def f(t, y):
        return [-k1 * y[0] + k2 * y[1] * y[2], k1 * y[0] - k2 * y[1] * y[2] - k3 * y[1] ** 2, k3 * y[1] ** 2]

    def jac(t, y):
        return np.array([[-k1, k2 * y[2], k2 * y[1]],
                         [k1, -k2 * y[2] - 2 * k3 * y[1], -k2 * y[1]],
                         [0, 2 * k3 * y[1], 0]])
    return f, jac


def hires(p):
    def f(t, y):
        return [-1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007,
                1.71 * y[0] - 8.75 * y[1],
                -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4],
                8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3],
                -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6],
                -280 * y[5] * y[7] + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6],
                280 * y[5] * y[7] - 1.81 * y[6],
                -280 * y[5] * y[7] + 1.81 * y[6]]

    def jac(t, y):
        J = np.zeros((8, 8))
        J[0, :3] = [-1.71, 0.43, 8.32]
        J[1, :2] = [1.71, -8.75]
        J[2, 2:5] = [-10.03, 0.43, 0.035]
        J[3, 1:4] = [8.32, 1.71, -1.12]
        J[4, 4:7] = [-1.745, 0.43, 0.43]
        J[5, 3:8] = [0.69, 1.71, -0.43 - 280 * y[7], 0.69, -280 * y[5]]
        J[6, 5:8] = [280 * y[7], -1.81, 280 * y[5]]
        J[7, 5:8] = [-280 * y[7], 1.81, -280 * y[5]]
        return J
    return f, jac


def orego(p):
    s, w, q = 77.27, 0.161, 8.375e-6

    def f(t, y):
        return [s * (y[1] + y[0] * (1 - q * y[0] - y[1])), (y[2] - (1 + y[0]) * y[1]) / s, w * (y[0] - y[2])]

    def jac(t, y):
        return np.array([[s * (1 - 2 * q * y[0] - y[1]), s * (1 - y[0]), 0],
                         [-y[1] / s, -(1 + y[0]) / s, 1 / s],
                         [w, 0, -w]])
    return f, jac


def vdpol(p):
    eps = p[0]  # 1e-6, Bari vdpol.f: y2' = ((1 - y1^2) y2 - y1) / eps

    def f(t, y):
        return [y[1], ((1 - y[0] ** 2) * y[1] - y[0]) / eps]

    def jac(t, y):
        return np.array([[0, 1], [(-2 * y[0] * y[1] - 1) / eps, (1 - y[0] ** 2) / eps]])
    return f, jac


# POLLU (Verwer 1994; Bari pollu.f): reaction k's rate is p_k times its
# reactants (0-based species; -1: first order), and dy_i/dt the signed sum
# of the rates, species by species as pollu.f writes it.
POLLU_REACT = [(0, -1), (1, 3), (4, 1), (6, -1), (6, -1), (6, 5), (8, -1), (8, 5), (10, 1), (10, 0), (12, -1), (9, 1),
               (13, -1), (0, 5), (2, -1), (3, -1), (3, -1), (15, -1), (15, -1), (16, 5), (18, -1), (18, -1), (0, 3),
               (18, 0), (19, -1)]
POLLU_DY = ["-r1-r10-r14-r23-r24+r2+r3+r9+r11+r12+r22+r25", "-r2-r3-r9-r12+r1+r21", "-r15+r1+r17+r19+r22",
            "-r2-r16-r17-r23+r15", "-r3+r4+r4+r6+r7+r13+r20", "-r6-r8-r14-r20+r3+r18+r18", "-r4-r5-r6+r13",
            "+r4+r5+r6+r7", "-r7-r8", "-r12+r7+r9", "-r9-r10+r8+r11", "+r9", "-r11+r10", "-r13+r12", "+r14",
            "-r18-r19+r16", "-r20", "+r20", "-r21-r22-r24+r23+r25", "-r25+r24"]


def pollu(p):
    S = np.zeros((20, 25))
    for i, terms in enumerate(POLLU_DY):
        for term in terms.replace("-", " -").replace("+", " +").split():
            S[i, int(term[2:]) - 1] += 1 if term[0] == "+" else -1
    ka = np.array([a for a, _ in POLLU_REACT])
    kb = np.array([b for _, b in POLLU_REACT])
    second = kb >= 0
    p = np.asarray(p)

    def rates(y):
        r = p * y[ka]
        r[second] *= y[kb[second]]
        return r

    def f(t, y):
        return S @ rates(np.asarray(y))

    def jac(t, y):
        D = np.zeros((25, 20))  # dr/dy
        for k in range(25):
            a, b = ka[k], kb[k]
            if b >= 0:
                D[k, a] += p[k] * y[b]
                D[k, b] += p[k] * y[a]
            else:
                D[k, a] += p[k]
        return S @ D
    return f, jac


PROBLEMS = {"rober": rober, "hires": hires, "orego": orego, "vdpol": vdpol, "pollu": pollu}
