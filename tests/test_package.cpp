// The smallest consumer of an installed plume, compiled by test_package.cmake
// with nothing but the flags of `pkg-config --cflags --libs plume`: loads the
// pendulum and checks H against its closed form, 1 kg · (1 m)² plus the bob's
// own 4·10⁻⁵ kg m².
#include <plume/algorithms/crba.hpp>
#include <plume/configuration.hpp>
#include <plume/urdf.hpp>

#include <cmath>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s pendulum.urdf\n", argv[0]);
    return 2;
  }
  const plume::Model model = plume::urdf::load(argv[1]);
  plume::Data data(model);
  const plume::MatrixX& H = plume::crba(model, data, plume::neutral_configuration(model));
  std::printf("pkg-config consumer: %s, nv = %d, H = %.6f kg m^2\n", model.name().c_str(), model.nv(), H(0, 0));
  return model.nv() == 1 && std::abs(H(0, 0) - 1.00004) < 1e-12 ? 0 : 1;
}
