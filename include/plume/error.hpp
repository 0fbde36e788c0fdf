#pragma once
/// @file
/// Exceptions thrown at plume's API boundary.
///
/// Every error a user can cause (a malformed file, a wrong vector size, a
/// non-physical inertia) is reported by an exception derived from plume::Error
/// whose message names the thing at fault: the file, the link or joint, the
/// argument and index. Solvers and the simulator report their outcomes through
/// status values instead, because an infeasible contact problem is a result,
/// not a programming error.

#include <stdexcept>
#include <string>

namespace plume {

/// Base class of every exception plume throws on purpose.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// A URDF file or string that cannot be turned into a Model: missing file,
/// malformed XML, invalid physical data. The message starts with the file name
/// (or "<string>") and names the link or joint at fault.
class UrdfError : public Error {
 public:
  using Error::Error;
};

/// A model assembled through ModelBuilder that violates a structural or
/// physical rule (unknown parent, duplicate name, non-physical inertia, …).
class ModelError : public Error {
 public:
  using Error::Error;
};

/// An argument of the wrong size or with a non-finite entry passed to a
/// checked entry point. The message names the argument and the index.
class ArgumentError : public Error {
 public:
  using Error::Error;
};

/// A world file that cannot be turned into a World. The message names the
/// file, the element and its line.
class WorldError : public Error {
 public:
  using Error::Error;
};

/// Geometry that cannot be used: a contact shape with a negative or
/// non-finite dimension, a placement that is not a rigid transform, a zero
/// plane normal; a mesh file that is missing, unreadable or corrupt; points
/// with no convex hull. The message names the shape or file.
class GeometryError : public Error {
 public:
  using Error::Error;
};

}  // namespace plume
