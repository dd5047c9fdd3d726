/**
 * Ground distance between two WGS-84 positions.
 *
 * The seed design used an equirectangular approximation: cheap, but wrong by
 * more than 0.5% beyond a few kilometres and across the antimeridian (where a
 * longitude step of 359.99 degrees looks like half the planet). Haversine is
 * the great-circle distance itself, so it is right for any threshold and any
 * latitude; the extra cost is two sines and an arcsine per ping, which is
 * small next to one message through Node-RED.
 *
 * The same formula, with the same constant, is in lua/sliding-window.lua so
 * that the memory and Redis stores reach identical decisions.
 */

/** IUGG mean Earth radius, in metres. */
export const EARTH_MEAN_RADIUS_METRES = 6_371_008.8;

const RADIANS_PER_DEGREE = Math.PI / 180;

export function distanceMetres(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const halfDLat = ((lat2 - lat1) * RADIANS_PER_DEGREE) / 2;
  // sin² of half the longitude step is periodic in 360 degrees, which is
  // what makes a step across the antimeridian come out short.
  const halfDLon = ((lon2 - lon1) * RADIANS_PER_DEGREE) / 2;
  const sinLat = Math.sin(halfDLat);
  const sinLon = Math.sin(halfDLon);
  const h =
    sinLat * sinLat +
    Math.cos(lat1 * RADIANS_PER_DEGREE) * Math.cos(lat2 * RADIANS_PER_DEGREE) * sinLon * sinLon;
  // Rounding can push h a hair above 1 for antipodal points.
  return 2 * EARTH_MEAN_RADIUS_METRES * Math.asin(Math.sqrt(Math.min(1, h)));
}
