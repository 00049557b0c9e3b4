#pragma once

// AdamW's and RAdam's step (torch.optim.AdamW; torch.optim.RAdam with
// decoupled_weight_decay=True), shared by the CPU and CUDA kernels. Step t (from 1), gradient g:
//   param *= 1 - lr * weight_decay                       (decoupled weight decay)
//   m += (1 - beta1) (g - m);  v = beta2 v + (1 - beta2) g^2
//   AdamW: param -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
//   RAdam: rho_inf = 2 / (1 - beta2) - 1, rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t);
//          rho_t > 5: param -= lr r sqrt(1 - beta2^t) / (1 - beta1^t) * m / (sqrt(v) + eps),
//            r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
//          else:      param -= lr / (1 - beta1^t) * m  (momentum SGD while v is unreliable)
// Note the two places of eps, as in PyTorch. With `corrected_eps` RAdam adds eps where AdamW
// does, to sqrt(v / (1 - beta2^t)), as fastai's RAdam and Ranger:
//          rho_t > 5: param -= lr r / (1 - beta1^t) * m / (sqrt(v / (1 - beta2^t)) + eps).
// beta1 is read per step, so that a schedule may move it (fastai's one-cycle momentum), and the
// bias correction 1 - beta1^t takes the step's own beta1, as fastai's does.
// Every case is param -= scale * m / (d sqrt(v) + e).
#include <cmath>

#include "operators/host_device.h"

namespace crossbow {

// std:: on the host, CUDA's own in device code.
CROSSBOW_HOST_DEVICE inline double Pow(double x, double y) {
#ifdef __CUDA_ARCH__
  return pow(x, y);
#else
  return std::pow(x, y);
#endif
}
template <typename T>
CROSSBOW_HOST_DEVICE inline T Sqrt(T x) {
#ifdef __CUDA_ARCH__
  return sqrt(x);
#else
  return std::sqrt(x);
#endif
}

struct AdamCoefficients {
  float decay, one_minus_beta1, beta2, one_minus_beta2, scale, d, e;
};

// The scalars of step t, in double (as PyTorch computes them, in Python floats).
CROSSBOW_HOST_DEVICE inline AdamCoefficients AdamCoefficientsFor(double t, double lr, double beta1,
                                                                 double beta2, double eps,
                                                                 double weight_decay, bool rectify,
                                                                 bool corrected_eps) {
  const double bc1 = 1 - Pow(beta1, t), bc2 = 1 - Pow(beta2, t);
  AdamCoefficients k{static_cast<float>(1 - lr * weight_decay),
                     static_cast<float>(1 - beta1),
                     static_cast<float>(beta2),
                     static_cast<float>(1 - beta2),
                     static_cast<float>(lr / bc1),
                     static_cast<float>(1 / Sqrt(bc2)),
                     static_cast<float>(eps)};
  if (!rectify) return k;
  const double rho_inf = 2 / (1 - beta2) - 1, rho_t = rho_inf - 2 * t * Pow(beta2, t) / bc2;
  if (rho_t > 5) {
    const double r =
        Sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
    if (corrected_eps) {
      k.scale = static_cast<float>(lr * r / bc1);
    } else {
      k.scale = static_cast<float>(lr * r * Sqrt(bc2) / bc1);
      k.d = 1.f;
    }
  } else {
    k.d = 0.f;
    k.e = 1.f;
  }
  return k;
}

// One element of the step, in place.
CROSSBOW_HOST_DEVICE inline void AdamElement(const AdamCoefficients& k, float g, float* param,
                                             float* m, float* v) {
  const float w = *param * k.decay;
  const float mi = *m + k.one_minus_beta1 * (g - *m);
  const float vi = k.beta2 * *v + k.one_minus_beta2 * (g * g);
  *m = mi;
  *v = vi;
  *param = w - k.scale * (mi / (k.d * Sqrt(vi) + k.e));
}

}  // namespace crossbow
