// C++ allocations through templates, lambdas, std::function and operator new
// (libstdc++ frames between the program and malloc).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

template <typename T, int N> struct Builder {
    __attribute__((noinline)) static std::vector<T> make()
    {
        if constexpr (N == 0) {
            std::vector<T> v;
            v.reserve(16);
            return v;
        } else {
            return Builder<T, N - 1>::make();
        }
    }
};

__attribute__((noinline)) static void with_callback(const std::function<void(int)> &f) { f(3); }

int main()
{
    auto v = Builder<long, 4>::make();
    std::map<std::string, std::unique_ptr<int>> m;
    with_callback([&](int n) {
        for (int i = 0; i < n; i++)
            m[std::string(40, char('a' + i))] = std::make_unique<int>(i);
    });
    return v.size() + m.size() == 3 ? 0 : 1;
}
