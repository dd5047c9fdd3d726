/**
 * Reference distances for the geo tests, written independently of
 * src/core/window/geo.ts (different formulas, constants typed in again here), so a
 * wrong radius, a degrees/radians slip or an approximation there shows up.
 */

/** IUGG mean Earth radius, metres: the sphere the design measures on. */
export const MEAN_RADIUS = 6_371_008.8;

const RAD = Math.PI / 180;

function unitVector(lat: number, lon: number): [number, number, number] {
  const phi = lat * RAD;
  const lambda = lon * RAD;
  return [Math.cos(phi) * Math.cos(lambda), Math.cos(phi) * Math.sin(lambda), Math.sin(phi)];
}

/**
 * Great-circle distance on the mean sphere from the angle between the two
 * position vectors, atan2(|a x b|, a . b): well conditioned at every angle,
 * and a different computation from haversine.
 */
export function greatCircleMetres(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const [ax, ay, az] = unitVector(lat1, lon1);
  const [bx, by, bz] = unitVector(lat2, lon2);
  const cx = ay * bz - az * by;
  const cy = az * bx - ax * bz;
  const cz = ax * by - ay * bx;
  const cross = Math.sqrt(cx * cx + cy * cy + cz * cz);
  const dot = ax * bx + ay * by + az * bz;
  return MEAN_RADIUS * Math.atan2(cross, dot);
}

/**
 * Vincenty's inverse formula on the WGS-84 ellipsoid: the geodesic length,
 * good to well under a millimetre for the distances the tests use. Returns
 * NaN if the iteration fails to converge (nearly antipodal points only).
 */
export function wgs84GeodesicMetres(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const a = 6_378_137;
  const f = 1 / 298.257223563;
  const b = a * (1 - f);
  const L = (lon2 - lon1) * RAD;
  const U1 = Math.atan((1 - f) * Math.tan(lat1 * RAD));
  const U2 = Math.atan((1 - f) * Math.tan(lat2 * RAD));
  const sinU1 = Math.sin(U1);
  const cosU1 = Math.cos(U1);
  const sinU2 = Math.sin(U2);
  const cosU2 = Math.cos(U2);

  let lambda = L;
  let sinSigma = 0;
  let cosSigma = 0;
  let sigma = 0;
  let cosSqAlpha = 0;
  let cos2SigmaM = 0;
  for (let iteration = 0; iteration < 1000; iteration++) {
    const sinLambda = Math.sin(lambda);
    const cosLambda = Math.cos(lambda);
    sinSigma = Math.hypot(cosU2 * sinLambda, cosU1 * sinU2 - sinU1 * cosU2 * cosLambda);
    if (sinSigma === 0) return 0;
    cosSigma = sinU1 * sinU2 + cosU1 * cosU2 * cosLambda;
    sigma = Math.atan2(sinSigma, cosSigma);
    const sinAlpha = (cosU1 * cosU2 * sinLambda) / sinSigma;
    cosSqAlpha = 1 - sinAlpha * sinAlpha;
    cos2SigmaM = cosSqAlpha === 0 ? 0 : cosSigma - (2 * sinU1 * sinU2) / cosSqAlpha;
    const C = (f / 16) * cosSqAlpha * (4 + f * (4 - 3 * cosSqAlpha));
    const previous = lambda;
    lambda =
      L +
      (1 - C) * f * sinAlpha * (sigma + C * sinSigma * (cos2SigmaM + C * cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM)));
    if (Math.abs(lambda - previous) < 1e-13) {
      const uSq = (cosSqAlpha * (a * a - b * b)) / (b * b);
      const A = 1 + (uSq / 16384) * (4096 + uSq * (-768 + uSq * (320 - 175 * uSq)));
      const B = (uSq / 1024) * (256 + uSq * (-128 + uSq * (74 - 47 * uSq)));
      const deltaSigma =
        B *
        sinSigma *
        (cos2SigmaM +
          (B / 4) *
            (cosSigma * (-1 + 2 * cos2SigmaM * cos2SigmaM) -
              (B / 6) * cos2SigmaM * (-3 + 4 * sinSigma * sinSigma) * (-3 + 4 * cos2SigmaM * cos2SigmaM)));
      return b * A * (sigma - deltaSigma);
    }
  }
  return Number.NaN;
}

/**
 * The point `metres` away from (lat, lon) along initial bearing `bearingDeg`
 * on the mean sphere (the direct problem), for building test pairs of a
 * known great-circle length.
 */
export function destination(lat: number, lon: number, bearingDeg: number, metres: number): { lat: number; lon: number } {
  const delta = metres / MEAN_RADIUS;
  const theta = bearingDeg * RAD;
  const phi1 = lat * RAD;
  const lambda1 = lon * RAD;
  const sinPhi2 = Math.sin(phi1) * Math.cos(delta) + Math.cos(phi1) * Math.sin(delta) * Math.cos(theta);
  const phi2 = Math.asin(sinPhi2);
  const lambda2 =
    lambda1 +
    Math.atan2(Math.sin(theta) * Math.sin(delta) * Math.cos(phi1), Math.cos(delta) - Math.sin(phi1) * sinPhi2);
  const lon2 = ((((lambda2 / RAD) + 540) % 360) + 360) % 360 - 180;
  return { lat: phi2 / RAD, lon: lon2 };
}

/** Degrees, minutes, seconds to decimal degrees (sign taken from degrees). */
export function dms(degrees: number, minutes: number, seconds: number): number {
  const magnitude = Math.abs(degrees) + minutes / 60 + seconds / 3600;
  return degrees < 0 || Object.is(degrees, -0) ? -magnitude : magnitude;
}
