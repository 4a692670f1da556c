/*
 * ufunc-cxx.cc - C++ names for function probes (tests/script/ufunc-cxx.t):
 * a namespace, a class with a member function, overloads.
 *   ufunc-cxx N     calls each N times, prints the total
 */
#include <cstdio>
#include <cstdlib>
#include <string>

#define NOIPA __attribute__((noinline, noipa))

namespace geo {
struct Point {
	int x, y;
};

class Shape {
public:
	explicit Shape(int b) : bias(b) {}
	NOIPA int area(int w, int h) const { return w * h + bias; }
	int bias;
};

NOIPA int sum(const Point *p) { return p->x + p->y; }
NOIPA int sum(int a, int b) { return a + b; }
}

NOIPA int plain(int x) { return x + 1; }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1, total = 0;
	geo::Shape s(7);
	std::string label("total");

	for (long i = 0; i < n; i++) {
		geo::Point pt{ (int)i, 2 };
		total += s.area(2, (int)i) + geo::sum(&pt) + geo::sum((int)i, 10) + plain((int)i);
	}
	std::printf("%s %ld\n", label.c_str(), total);
	return 0;
}
